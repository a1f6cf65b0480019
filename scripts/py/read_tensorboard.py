"""Reads TensorBoard event files with TensorBoard's own reader and prints their scalars as JSON.

    python read_tensorboard.py DIR  ->  {"tag": [[step, value], ...], ...}

DIR is a folder of event files (one run, as `tensorboard --logdir` sees it). The EventAccumulator keeps every scalar
(size guidance 0), so nothing is sampled away; values are the float32 TensorBoard stored, printed exactly.
"""
import json
import sys

from tensorboard.backend.event_processing import event_accumulator


def main() -> None:
    acc = event_accumulator.EventAccumulator(sys.argv[1], size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    out = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
