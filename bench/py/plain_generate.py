"""The plainest transformers generate() of the engine bench's workload, as a check on the bench's own transformers side
(test/parity/engine/hf_generate.py, which also pads, masks and times steps): the prompts as one batch without an attention
mask (they are all the same length), greedy, no end-of-sequence id, under inference_mode.

usage: plain_generate.py MODEL_DIR PROMPTS.json THREADS MAX_NEW_TOKENS REPEATS
prints {"seconds": best of REPEATS after one warm-up, "new_tokens": generated per run}
"""
import json
import sys
import time

import torch
import transformers


def main() -> None:
    model_dir, prompts_file, threads, max_new, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    if threads > 0:
        torch.set_num_threads(threads)
    with open(prompts_file) as f:
        ids = torch.tensor(json.load(f), dtype=torch.long)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    best, out = float("inf"), None
    with torch.inference_mode():
        for r in range(repeats + 1):
            t0 = time.perf_counter()
            out = model.generate(input_ids=ids, max_new_tokens=max_new, do_sample=False, eos_token_id=None, pad_token_id=0)
            if r > 0:
                best = min(best, time.perf_counter() - t0)
    print(json.dumps({"seconds": best, "new_tokens": int((out.shape[1] - ids.shape[1]) * out.shape[0])}))


if __name__ == "__main__":
    main()
