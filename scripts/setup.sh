#!/usr/bin/env bash
# One-command setup: find or fetch libtorch, install npm dependencies, build the native addon, compile the TypeScript.
# Safe to re-run: every step is skipped when its output is already in place, so a second run takes seconds.
#
# Where libtorch comes from, in order:
#   1. $LIBTORCH (a libtorch folder with share/cmake/Torch) or $Torch_DIR (the folder holding TorchConfig.cmake);
#   2. the project-local ./libtorch unpacked by an earlier run;
#   3. a Python that has torch installed ($LAMER_PYTHON, else python3), through torch.utils.cmake_prefix_path;
#   4. the CPU PyTorch wheel (torch==$LAMER_TORCH_VERSION, default 2.13.0) fetched with pip and unpacked into ./libtorch.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
torch_version=${LAMER_TORCH_VERSION:-2.13.0}
python=${LAMER_PYTHON:-python3}

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || die "Node.js (>= 20.17) is not on PATH; install it first."
command -v cmake >/dev/null || die "cmake is not on PATH; install it (Debian: apt-get install cmake)."
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler; install one (Debian: apt-get install g++)."

# ---- 1. libtorch -------------------------------------------------------------------------------------------
torch_dir=""
torch_source=""
if [[ -n "${LIBTORCH:-}" ]]; then
  [[ -f "$LIBTORCH/share/cmake/Torch/TorchConfig.cmake" ]] || die "LIBTORCH=$LIBTORCH has no share/cmake/Torch/TorchConfig.cmake; point it at an unpacked libtorch."
  torch_dir="$LIBTORCH/share/cmake/Torch"; torch_source="LIBTORCH"
elif [[ -n "${Torch_DIR:-}" ]]; then
  [[ -f "$Torch_DIR/TorchConfig.cmake" ]] || die "Torch_DIR=$Torch_DIR has no TorchConfig.cmake."
  torch_dir="$Torch_DIR"; torch_source="Torch_DIR"
elif [[ -f "$root/libtorch/share/cmake/Torch/TorchConfig.cmake" ]]; then
  torch_dir="$root/libtorch/share/cmake/Torch"; torch_source="project libtorch (wheel torch==$(cat "$root/libtorch/VERSION" 2>/dev/null || echo '?'))"
elif prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  torch_dir="$prefix/Torch"; torch_source="python ($python, torch $("$python" -c 'import torch; print(torch.__version__)'))"
else
  say "no libtorch found; fetching the CPU PyTorch wheel torch==$torch_version with pip"
  mkdir -p "$root/.cache/wheels"
  if ! "$python" -m pip download --no-deps --retries 0 --timeout 2 --only-binary=:all: \
      -d "$root/.cache/wheels" "torch==$torch_version" >"$root/.cache/pip-download.log" 2>&1; then
    cat "$root/.cache/pip-download.log" >&2
    die "could not fetch torch==$torch_version with pip. Install PyTorch (pip install torch) or unpack a libtorch and set LIBTORCH=/path/to/libtorch, then run again."
  fi
  wheel=$(ls -t "$root"/.cache/wheels/torch-"$torch_version"*.whl | head -n 1)
  say "unpacking $(basename "$wheel") into ./libtorch"
  rm -rf "$root/libtorch.partial"
  "$python" - "$wheel" "$root/libtorch.partial" <<'PY'
import sys, zipfile, os
wheel, out = sys.argv[1], sys.argv[2]
keep = ("torch/lib/", "torch/include/", "torch/share/")
skip = ("libtorch_python", "test", "libshm_windows", "libjitbackend", "libbackend_with_compiler", "libaoti_custom_ops")
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith(keep) or name.endswith("/"):
            continue
        if name.startswith("torch/lib/") and any(s in os.path.basename(name) for s in skip):
            continue
        dest = os.path.join(out, name[len("torch/"):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(dest, mode)
PY
  echo "$torch_version" > "$root/libtorch.partial/VERSION"
  rm -rf "$root/libtorch" && mv "$root/libtorch.partial" "$root/libtorch"
  torch_dir="$root/libtorch/share/cmake/Torch"; torch_source="project libtorch (wheel torch==$torch_version)"
fi
say "libtorch: $torch_dir  [$torch_source]"

# ---- 2. npm dependencies -----------------------------------------------------------------------------------
if [[ ! -d node_modules/.bin || package-lock.json -nt node_modules/.package-lock.json ]]; then
  say "installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi

# ---- 3. native addon ---------------------------------------------------------------------------------------
LAMER_TORCH_DIR="$torch_dir" LAMER_TORCH_SOURCE="$torch_source" node scripts/build-native.mjs

# ---- 4. TypeScript to dist/ ----------------------------------------------------------------------------------
# What `import 'lamer'` loads from plain Node and from projects that install this one (package.json exports).
say "compiling TypeScript to dist/"
npm run --silent build
say "ready"
