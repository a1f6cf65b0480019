#!/usr/bin/env bash
# The CUDA build checked on a machine without a GPU: installs torch's CUDA wheel (and the NVIDIA library wheels it
# needs) into a venv from the local package index, builds the addon against it in its own build folder, then runs the
# test suite with that addon. Every test must pass or skip, and a skip must name the missing GPU. Prints the counts
# and the time each part took.
#
#   bash scripts/cuda-build-check.sh            # venv .cache/cuda-venv, build folder build-cuda
#   LAMER_CUDA_VENV=... LAMER_CUDA_BUILD_DIR=... bash scripts/cuda-build-check.sh
#
# Needs nvcc (the CUDA toolkit) for the .cu kernels; without it the build has CUDA graphs and NCCL but not the
# kernels, and says so. Not part of .ci/run: it took about 20 minutes on 2 cores when last timed (the build alone 5);
# it prints each part's time.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LAMER_CUDA_VENV:-.cache/cuda-venv}
BUILD=${LAMER_CUDA_BUILD_DIR:-build-cuda}
TORCH_VERSION=${LAMER_CUDA_TORCH:-2.14.1}
PIP=(--retries 0 --timeout 2 --disable-pip-version-check --quiet)
t0=$(date +%s)
stamp() { echo "cuda-build-check: $1 ($(($(date +%s) - t0)) s)"; }

# Where the venv's torch lies, without importing it (installed without its Python requirements, it cannot be).
torch_root() { "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.distribution("torch").locate_file("torch"))' 2>/dev/null; }
has_cuda_torch() { local r; r=$(torch_root) && [ -e "$r/lib/libtorch_cuda.so" ]; }

if ! has_cuda_torch; then
  python3 -m venv "$VENV"
  # torch's own requirements pull triton and cuda-bindings, which a build does not use (and a local index may lack):
  # torch without its requirements, then the NVIDIA libraries it links, as its metadata lists them.
  "$VENV/bin/pip" install "${PIP[@]}" --no-deps "torch==$TORCH_VERSION"
  reqs=$("$VENV/bin/python" - <<'PY'
import importlib.metadata as m
out = []
for r in m.requires("torch") or []:
    name = r.split(";")[0].strip()
    if name.startswith(("cuda-toolkit", "nvidia-")):
        out.append(name.replace(" ", ""))
print(" ".join(out))
PY
)
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install "${PIP[@]}" $reqs
  stamp "venv ready"
fi
if ! has_cuda_torch; then
  echo "cuda-build-check: $VENV has no CUDA torch (the index offered a CPU build?)" >&2
  exit 1
fi

TORCH_DIR="$(torch_root)/share/cmake/Torch"
LAMER_BUILD_DIR="$BUILD" Torch_DIR="$TORCH_DIR" node scripts/build-native.mjs
stamp "addon built in $BUILD"
LAMER_BUILD_DIR="$BUILD" node --import tsx -e '
  const { addon } = await import("./src/native/addon.ts");
  const i = addon().buildInfo();
  console.log(`cuda-build-check: addon: torch ${i.torchVersion}, CUDA ${i.cudaCompiled}, kernels ${i.cudaKernels}, GPU ${i.cudaAvailable}, backends ${addon().distBackends}`);
  if (!i.cudaCompiled) process.exit(1);'

report=$(mktemp)
set +e
LAMER_BUILD_DIR="$BUILD" npx vitest run --reporter=default --reporter=json --outputFile.json="$report"
rc=$?
set -e
stamp "tests done (exit $rc)"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const tests = r.testResults.flatMap((f) => f.assertionResults.map((a) => ({ ...a, file: f.name })));
  const count = (s) => tests.filter((t) => t.status === s).length;
  console.log(`cuda-build-check: ${count("passed")} passed, ${count("failed")} failed, ${count("pending") + count("skipped")} skipped`);
  // A skipped test must say why in its name or its group name (gpuTitle, a py.reason, ...).
  const silent = tests.filter((t) => (t.status === "pending" || t.status === "skipped") && !/skipped:/.test(t.fullName));
  for (const t of silent) console.log(`  skipped without a reason: ${t.fullName} (${t.file})`);
  if (silent.length) process.exitCode = 1;' "$report" || rc=1
rm -f "$report"
stamp "finished"
exit "$rc"
