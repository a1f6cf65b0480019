"""The train step written plainly in PyTorch + transformers: the independent reference of the train-step tests (same
initial weights, data and optimizer settings give the same loss curve) and the other side of the training benchmark.

usage: train_reference.py --model DIR --input IN.json --out OUT.json
IN.json: {
  "objective": "sft" | "policy",
  "rows": [{"prompt": [ids], "response": [ids], "advantage": a, "old_logprobs": [..] (policy, optional)}],
  "steps": 20, "lr": 1e-3, "weight_decay": 0.01, "betas": [0.9, 0.999], "eps": 1e-8, "grad_clip": 1.0,
  "temperature": 1.0, "clip": 0.2, "dual_clip": 3.0, "entropy_coef": 0.001,
  "warmup_steps": 0 (steps run untimed first), "threads": 0 (torch threads; 0 = leave torch's default)
}
OUT.json: {"losses": [...], "grad_norms": [...], "seconds": [... per step], "tokens": response tokens per step}

One mini-batch = all rows = one forward/backward (left padding, positions counting real tokens) and one
torch.optim.AdamW step (single-tensor path) after clip_grad_norm_. Weight decay groups: none on norm weights and biases.
SFT loss: token-mean cross-entropy on response tokens. Policy loss: dual-clip PPO, token-mean, minus
entropy_coef * token-mean entropy, logits only at the response positions (logits_to_keep).
"""
import argparse
import json
import time

import torch
import transformers


def batch_tensors(rows):
    lengths = [len(r["prompt"]) + len(r["response"]) for r in rows]
    T = max(lengths)
    B = len(rows)
    ids = torch.zeros(B, T, dtype=torch.long)
    mask = torch.zeros(B, T, dtype=torch.long)
    resp = torch.zeros(B, T, dtype=torch.bool)  # resp[b, t]: token t is a response token (predicted at t - 1)
    for b, r in enumerate(rows):
        seq = r["prompt"] + r["response"]
        off = T - len(seq)
        ids[b, off:] = torch.tensor(seq)
        mask[b, off:] = 1
        resp[b, off + len(r["prompt"]):] = True
    positions = (mask.cumsum(1) - 1).clamp_min(0)
    return ids, mask, positions, resp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.input) as f:
        req = json.load(f)
    if req.get("threads"):
        torch.set_num_threads(int(req["threads"]))
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.train()
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("norm.weight") or name.endswith(".bias") else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": req.get("weight_decay", 0.01)}, {"params": no_decay, "weight_decay": 0.0}],
        lr=req["lr"], betas=tuple(req.get("betas", [0.9, 0.999])), eps=req.get("eps", 1e-8), foreach=False,
    )
    rows = req["rows"]
    objective = req.get("objective", "sft")
    temperature = float(req.get("temperature", 1.0))
    ids, mask, positions, resp = batch_tensors(rows)
    keep = max(len(r["response"]) for r in rows) + 1  # logits at the last `keep` columns cover every response token
    T = ids.shape[1]
    resp_k = resp[:, T - keep + 1:]  # response flags of the predicted tokens, aligned with logits[:, :-1]
    targets = ids[:, T - keep + 1:]
    n_tok = resp_k.sum()
    adv = old = None
    if objective == "policy":
        adv = torch.zeros(resp_k.shape)
        old = torch.zeros(resp_k.shape)
        for b, r in enumerate(rows):
            n = len(r["response"])
            adv[b, -n:] = float(r["advantage"])
            if r.get("old_logprobs") is not None:
                old[b, -n:] = torch.tensor(r["old_logprobs"], dtype=torch.float32)
    out = {"losses": [], "grad_norms": [], "seconds": [], "tokens": int(n_tok)}
    warmup = int(req.get("warmup_steps", 0))
    for step in range(warmup + req["steps"]):
        t0 = time.perf_counter()
        logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=keep).logits
        z = logits[:, :-1].float() / temperature
        lsm = torch.log_softmax(z, dim=-1)
        lp = lsm.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        m = resp_k.float()
        if objective == "sft":
            loss = -(lp * m).sum() / n_tok
        else:
            old_lp = torch.where(resp_k, old, lp.detach()) if any(r.get("old_logprobs") is not None for r in rows) else lp.detach()
            ratio = torch.exp(torch.clamp(lp - old_lp, -20, 20))
            l1 = -adv * ratio
            l2 = -adv * torch.clamp(ratio, 1 - req.get("clip", 0.2), 1 + req.get("clip", 0.2))
            c1 = torch.maximum(l1, l2)
            l3 = -adv * req.get("dual_clip", 3.0)
            pg = torch.where(adv < 0, torch.minimum(l3, c1), c1)
            ent = -(lsm.exp() * lsm).sum(-1)
            loss = ((pg - req.get("entropy_coef", 0.001) * ent) * m).sum() / n_tok
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), req.get("grad_clip", 1.0))
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        if step >= warmup:
            out["losses"].append(loss.item())
            out["grad_norms"].append(norm.item())
            out["seconds"].append(dt)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
