"""peft's side of the LoRA parity tests: adapters written by peft, and peft's log-probs, logits and gradients of an
adapted model, all in float32. Served by oracle.py:

  {"op": "peft_make", "model": DIR, "out": DIR, "r": 4, "alpha": 8, "targets": [...] | "all-linear", "seed": 1,
   "use_rslora": false}
      -> a peft adapter written by save_pretrained, its B drawn at random too (peft starts B at zero, which would make
         every comparison trivial); returns {"trainable": n} (peft's trainable parameter count)
  {"op": "peft_count", "model": DIR, "r": 4, "targets": [...] | "all-linear"} -> {"trainable": n}
  {"op": "peft_reference", "model": DIR, "adapter": DIR, "sequences": [[...]], "starts": [...], "logits": bool,
   "sft_rows": [{"prompt": [...], "response": [...]}] (optional)}
      -> {"logprobs": [[...]], "logits": [...], "grads": {peft key: flat values}}: each sequence alone, no padding;
         grads of the token-mean cross-entropy over the rows' response tokens (one batch, each row alone, summed)
"""
import torch
import transformers
import peft


def _base(model_dir):
    return transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)


def _targets(t):
    return t if isinstance(t, str) else list(t)


def make(req):
    torch.manual_seed(int(req.get("seed", 0)))
    cfg = peft.LoraConfig(
        r=int(req["r"]),
        lora_alpha=req["alpha"],
        target_modules=_targets(req["targets"]),
        lora_dropout=0.0,
        use_rslora=bool(req.get("use_rslora", False)),
        task_type="CAUSAL_LM",
    )
    model = peft.get_peft_model(_base(req["model"]), cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.05)
    model.save_pretrained(req["out"])
    trainable, _ = model.get_nb_trainable_parameters()
    return {"trainable": int(trainable)}


def count(req):
    cfg = peft.LoraConfig(r=int(req["r"]), lora_alpha=req.get("alpha", 8), target_modules=_targets(req["targets"]), task_type="CAUSAL_LM")
    model = peft.get_peft_model(_base(req["model"]), cfg)
    trainable, _ = model.get_nb_trainable_parameters()
    return {"trainable": int(trainable)}


def reference(req):
    model = peft.PeftModel.from_pretrained(_base(req["model"]), req["adapter"], is_trainable=True)
    model.eval()  # dropout off; gradients still flow
    out = {"logprobs": [], "logits": [], "grads": {}}
    with torch.no_grad():
        for seq, start in zip(req["sequences"], req["starts"]):
            logits = model(input_ids=torch.tensor([seq], dtype=torch.long)).logits[0].float()
            lp = torch.log_softmax(logits, dim=-1)
            out["logprobs"].append([lp[t - 1, seq[t]].item() for t in range(start, len(seq))])
            if req.get("logits"):
                out["logits"].append(logits.tolist())
    rows = req.get("sft_rows")
    if rows:
        tokens = sum(len(r["response"]) for r in rows)
        loss = 0.0
        for r in rows:
            seq = r["prompt"] + r["response"]
            logits = model(input_ids=torch.tensor([seq], dtype=torch.long)).logits[0].float()
            lp = torch.log_softmax(logits, dim=-1)
            start = len(r["prompt"])
            picked = torch.stack([lp[t - 1, seq[t]] for t in range(start, len(seq))])
            loss = loss - picked.sum() / tokens
        loss.backward()
        for name, p in model.named_parameters():
            if p.requires_grad and p.grad is not None:
                key = name.replace(".default.weight", ".weight")
                out["grads"][key] = p.grad.detach().reshape(-1).tolist()
    return out
