#!/usr/bin/env bash
# One seed of configs/gpu.yaml on a CUDA machine, timed. The run stops at LIMIT seconds (default 570, for machines
# lent in calls of at most 10 minutes) with its checkpoints in runs/gpu-check-seed0; calling the
# script again on the same (still warm) machine resumes it. The log, the elapsed seconds and the run's eval.json and
# compare.json go to $OUT (default /tmp/lamer-device-train).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/lamer-device-train}
mkdir -p "$out"
run=runs/gpu-check-seed0
mode=--force
if [ -d "$run" ]; then mode=--resume; fi
start=$(date +%s)
# SIGINT first: the trainer checkpoints what completed before it exits.
timeout --signal=INT --kill-after=30 "${LIMIT:-570}" node bin/lamer.js train --config gpu --seeds 0 --name gpu-check "$mode" 2>&1 | tee -a "$out/train.log"
echo "seconds $(( $(date +%s) - start )) ($mode)" | tee -a "$out/train.log"
for f in eval.json compare.json; do [ -f "$run/$f" ] && cp "$run/$f" "$out/$f"; done
exit 0
