#!/usr/bin/env bash
# The GPU checks of the engine in one run, for a machine with a CUDA GPU: the tests that need a GPU (CUDA graphs
# against eager decoding, live-length attention against masked, precapture, log-probs against the model, a train step
# seen by the next replay, with and without a LoRA adapter on a bf16 base; the fused operators' CUDA kernels; the
# GiGPO kernel), then the GPU engine bench beside
# transformers. Logs and the bench's JSON go to $OUT (default /tmp/lamer-device-check). Never run on a GPU: how long
# it takes there is not measured.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/lamer-device-check}
mkdir -p "$out"
node bin/lamer.js doctor | tee "$out/doctor.txt"
npx vitest run test/native/engine/cuda-graphs.test.ts test/native/model/fused-ops.test.ts test/native/algo/native.test.ts 2>&1 | tee "$out/cuda-tests.log"
LAMER_BENCH_GPU_SHAPES=${LAMER_BENCH_GPU_SHAPES:-0.6b-b32,0.6b-b128,4b-b64} \
  npx tsx bench/run.ts --filter "engine: GPU" --json "$out/engine-gpu.json" 2>&1 | tee "$out/engine-gpu.log"
