"""transformers' forward + log-prob throughput on a checkpoint, for bench/model.bench.ts to report beside the
project's figure on the same model and inputs.

usage: bench_forward.py --model DIR --batch B --len T [--seconds 1.5] [--threads N]
prints {"tokens_per_s": ...}
"""
import argparse
import json
import os
import time

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import transformers  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--len", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    vocab = model.config.vocab_size
    ids = torch.tensor([[(b * 31 + t * 7) % vocab for t in range(args.len)] for b in range(args.batch)])

    def step() -> None:
        logits = model(input_ids=ids).logits
        torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, 1:, None])

    step()
    tokens = 0
    start = time.perf_counter()
    while True:
        step()
        tokens += args.batch * args.len
        if time.perf_counter() - start >= args.seconds:
            break
    print(json.dumps({"tokens_per_s": tokens / (time.perf_counter() - start)}))


if __name__ == "__main__":
    main()
