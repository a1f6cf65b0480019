"""Reference log-probs and logits from transformers, for parity tests.

usage: reference.py --model DIR --input IN.json --out OUT.json
IN.json: {"sequences": [[ids...], ...], "starts": [s0, ...], "temperature": 1.0, "logits": true|false}
OUT.json: {"logprobs": [[...], ...], "logits": [[[...vocab] per position] per sequence] (when asked)}
Each sequence runs alone (batch of one, no padding), in float32, so the reference has no padding logic of its own.
logprobs[j][t - starts[j]] = log_softmax(logits[t - 1] / temperature)[ids[t]].
"""
import argparse
import json

import torch
import transformers


def compute(model_dir: str, req: dict) -> dict:
    torch.set_grad_enabled(False)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    temperature = float(req.get("temperature", 1.0))
    out = {"logprobs": [], "logits": []}
    for seq, start in zip(req["sequences"], req["starts"]):
        ids = torch.tensor([seq], dtype=torch.long)
        logits = model(input_ids=ids).logits[0].float()
        lp = torch.log_softmax(logits / temperature, dim=-1)
        out["logprobs"].append([lp[t - 1, seq[t]].item() for t in range(start, len(seq))])
        if req.get("logits"):
            out["logits"].append(logits.tolist())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.input) as f:
        req = json.load(f)
    out = compute(args.model, req)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
