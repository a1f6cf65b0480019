#!/usr/bin/env bash
# The GPU checks in stages, most important figures first, each stage under its own time limit and all of them under
# one budget (LAMER_DEVICE_BUDGET seconds, default 540: one 10-minute device command with time to spare):
#
#   build         the addon against python3's torch (CUDA kernels when nvcc is there); always runs (seconds when built)
#   engine        generation tokens/s: the Qwen3-0.6B shape at batch 32 (engine with and without CUDA graphs), nano-vLLM's
#                 workload (256 sequences of random 100-1,024 prompt and output tokens; prefix cache on and off), decode
#                 attention alone (time, bandwidth)
#   train         train-step tokens/s: Qwen3-0.6B shape full fine-tuning, Qwen3-4B shape LoRA r16; the 0.6B shape's step
#                 on 8 rows sharing 1,536 tokens of a 2,048-token prompt, shared prefixes off and on
#   tests         the GPU test files (vitest.gpu.config.ts: CUDA graphs against eager, live-length attention, the
#                 fused operators' kernels, sequence attention's kernel choice, the GiGPO kernel, train steps seen by
#                 the next replay, shared-prefix train steps in bf16 against padded ones)
#   hf            transformers' generate() on the engine stage's batch-32 case (static cache, then eager)
#   engine-large  the Qwen3-0.6B shape at batch 128 and the Qwen3-4B shape at batch 64, engine then transformers
#   job           the default job (configs/default.yaml, seed 0), its wall time; stopped with SIGINT at its limit, it
#                 checkpoints, and the next call on the same (warm) machine resumes it
#
#   bash scripts/device-check.sh                      every stage
#   bash scripts/device-check.sh engine-large job     the build, then these (a second call: the stages the first left)
#
# On the project's lent device machine (no Node there): run ../shared/device/pack here first, then the device command
# `bash scripts/device-check.sh` with carry [".device"]; node and node_modules are unpacked from .device/.
#
# Everything goes to $OUT (default /tmp/lamer-device-check) in four files (the device machine returns at most 8):
# rows.jsonl (every bench row as one JSON line, appended the moment it is measured, with notes, skips and one line
# per stage), stages.txt (the machine, each stage's outcome and time as it ends, and the command for the stages
# left), build.txt (on success `lamer doctor`; on failure the build's first errors, compactly) and log.txt (every
# stage's output, appended as it runs). Without a GPU the GPU stages skip, saying why; LAMER_BENCH_SMOKE=cpu runs the
# bench stages on the CPU at toy sizes instead (bench/gpu.ts), to check the benches and this script end to end.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/lamer-device-check}
mkdir -p "$out"
rows="$out/rows.jsonl"
status="$out/stages.txt"
budget=${LAMER_DEVICE_BUDGET:-540}
t0=$(date +%s)
all=(engine train tests hf engine-large job)
# Each stage's own limit in seconds (the budget left lowers it).
declare -A cap=([build]=450 [engine]=200 [train]=150 [tests]=150 [hf]=200 [engine-large]=240 [job]=540)

wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=("${all[@]}")
for s in "${wanted[@]}"; do
  if [[ ! " ${all[*]} " == *" $s "* ]]; then
    echo "device-check: unknown stage '$s' (stages: build, always run; ${all[*]})" >&2
    exit 2
  fi
done

elapsed() { echo $(($(date +%s) - t0)); }
say() { echo "$*" | tee -a "$status"; }
# A JSON string of $1 (quotes, backslashes and control characters escaped).
json() { node -e 'process.stdout.write(JSON.stringify(process.argv[1]))' "$1"; }
stage_line() { echo "{\"stage\":\"$1\",\"status\":$(json "$2"),\"seconds\":$3,\"at\":\"$(date -u +%FT%TZ)\"}" >>"$rows"; }

# ---- node: on PATH, or from .device/ (../shared/device/pack) --------------------------------------------------------
if ! command -v node >/dev/null; then
  if [ -f .device/node.xz ]; then
    mkdir -p /tmp/node-bin
    [ -x /tmp/node-bin/node ] || { xz -dc .device/node.xz >/tmp/node-bin/node && chmod +x /tmp/node-bin/node; }
    export PATH=/tmp/node-bin:$PATH
  else
    echo "device-check: no node on PATH and no .device/node.xz (run ../shared/device/pack, carry .device)" | tee -a "$status"
    exit 1
  fi
fi
if [ ! -d node_modules/.bin ]; then
  if [ -f .device/node_modules.txz ]; then
    xz -dc .device/node_modules.txz | tar -xf -
  else
    echo "device-check: no node_modules and no .device/node_modules.txz" | tee -a "$status"
    exit 1
  fi
fi
export PATH=$PATH:/usr/local/cuda/bin
if [ -z "${CUDACXX:-}" ] && command -v nvcc >/dev/null; then export CUDACXX=$(command -v nvcc); fi

{
  echo "device-check $(date -u +%FT%TZ): stages ${wanted[*]}, budget ${budget} s"
  echo "node $(node --version); nvcc $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo none)"
  nvidia-smi -L 2>/dev/null || echo "nvidia-smi: none"
} | tee -a "$status"

# ---- build --------------------------------------------------------------------------------------------------------
# python3's torch when it has one (the device image's CUDA torch), else what scripts/build-native.mjs finds.
torch_version=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
build_env=()
if [ -n "$torch_version" ]; then
  torch_dir="$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')/Torch"
  build_env=(LAMER_TORCH_DIR="$torch_dir" LAMER_TORCH_SOURCE="python3 (torch $torch_version)")
  say "python3 torch $torch_version"
fi
build_log=/tmp/lamer-device-build.log
bt=$(elapsed)
timeout --kill-after=10 "${cap[build]}" env "${build_env[@]}" node scripts/build-native.mjs >"$build_log" 2>&1
rc=$?
bs=$(($(elapsed) - bt))
if [ $rc -ne 0 ]; then
  {
    if [ $rc -eq 124 ]; then echo "build: timed out after ${cap[build]} s"; else echo "build: failed (exit $rc) after $bs s"; fi
    echo "--- first errors:"
    grep -n -E -m 12 -A 3 -e ': (fatal )?error' -e '\): error' -e 'CMake Error' -e 'undefined reference' -e '^make.*Error' "$build_log" | cut -c1-400
    echo "--- last lines:"
    tail -n 12 "$build_log" | cut -c1-400
  } >"$out/build.txt"
  cat "$out/build.txt"
  say "build: FAILED (exit $rc, $bs s); first errors in build.txt; no stage ran"
  stage_line build "failed (exit $rc)" "$bs"
  exit 1
fi
say "build: ok ($bs s)"
stage_line build ok "$bs"
node bin/lamer.js doctor >"$out/build.txt" 2>&1 || true

# Whether the addon sees a GPU: '' when it does, else why not.
no_gpu=$(node --import tsx -e '
  const { addon } = await import("./src/native/addon.ts");
  const i = addon().buildInfo();
  if (!i.cudaCompiled) console.log("the addon was built without CUDA (torch " + i.torchVersion + ")");
  else if (!i.cudaAvailable || i.cudaDeviceCount === 0) console.log("the addon has CUDA but sees no GPU");' 2>&1)
smoke=${LAMER_BENCH_SMOKE:-}
[ -n "$no_gpu" ] && say "no GPU: $no_gpu"

# ---- the stages ---------------------------------------------------------------------------------------------------
left_over=()
ran=
run_stage() { # NAME NEEDS(gpu|bench) COMMAND...
  local name=$1 needs=$2
  shift 2
  ran=
  if [ -n "$no_gpu" ] && { [ "$needs" = gpu ] || [ "$smoke" != cpu ]; }; then
    say "$name: skipped: no GPU ($no_gpu)"
    stage_line "$name" "skipped: no GPU ($no_gpu)" 0
    return
  fi
  local left=$((budget - $(elapsed)))
  if [ $left -lt 45 ]; then
    left_over+=("$name")
    say "$name: not run: ${left} s of the budget left"
    stage_line "$name" "not run: ${left} s of the budget left" 0
    return
  fi
  local limit=${cap[$name]}
  [ $limit -gt $((left - 15)) ] && limit=$((left - 15))
  local st=$(elapsed)
  ran=$name
  echo "== $name (limit $limit s) ==" | tee -a "$out/log.txt"
  timeout --signal="${STAGE_SIGNAL:-TERM}" --kill-after=20 "$limit" "$@" 2>&1 | tee -a "$out/log.txt"
  local rc=${PIPESTATUS[0]} s=$(($(elapsed) - st)) what
  case $rc in
    0) what=ok ;;
    124)
      what="timed out at its limit of $limit s (rows measured so far are in rows.jsonl)"
      left_over+=("$name")
      ;;
    *) what="failed (exit $rc; its output is in log.txt)" ;;
  esac
  say "$name: $what ($s s)"
  stage_line "$name" "$what" "$s"
}

bench=(node_modules/.bin/tsx bench/run.ts --rows "$rows" --filter)
for s in "${all[@]}"; do
  [[ " ${wanted[*]} " == *" $s "* ]] || continue
  case $s in
    tests) run_stage tests gpu node_modules/.bin/vitest run --config vitest.gpu.config.ts ;;
    engine) run_stage engine bench "${bench[@]}" 'engine: GPU 0.6b-b32 engine|engine: GPU standard|engine: GPU attention' ;;
    train) run_stage train bench "${bench[@]}" 'train step: GPU' ;;
    hf) run_stage hf bench "${bench[@]}" 'engine: GPU 0.6b-b32 transformers' ;;
    engine-large) run_stage engine-large bench "${bench[@]}" 'engine: GPU 0.6b-b128|engine: GPU 4b-b64' ;;
    job)
      # SIGINT at the limit: the trainer checkpoints what completed, and the next call on a warm machine resumes.
      run=runs/device-default-seed0
      mode=--force
      [ -d "$run" ] && mode=--resume
      js=$(elapsed)
      STAGE_SIGNAL=INT run_stage job gpu node bin/lamer.js train --seeds 0 --name device-default "$mode"
      if [ "$ran" = job ]; then
        finished=false
        [ -f "$run/eval.json" ] && finished=true
        echo "{\"stage\":\"job\",\"name\":\"default job (configs/default.yaml, seed 0): wall time of this call ($mode)\",\"value\":$(($(elapsed) - js)),\"unit\":\"s\",\"finished\":$finished}" >>"$rows"
        # Where the iterations' time went on the GPU, the engine/trainer log-prob gap (bf16 engine and trainer) and
        # the CUDA allocator's bytes, from the run's metrics.jsonl, into log.txt.
        {
          echo "== job: iteration costs, time parts, agreement (scripts/iteration-costs.mjs) =="
          node scripts/iteration-costs.mjs "$run" 2>&1
          grep -h '"type":"iteration"' "$run"/*/metrics.jsonl | tail -n 1 | grep -o '"cuda":{[^}]*}' || true
        } >>"$out/log.txt"
      fi
      ;;
  esac
done

if [ ${#left_over[@]} -gt 0 ]; then
  say "left for a second call: bash scripts/device-check.sh ${left_over[*]}"
else
  say "every stage asked for ran or skipped ($(elapsed) s)"
fi
