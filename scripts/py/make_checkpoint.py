"""Writes a tiny random Hugging Face checkpoint with transformers itself, as an independent source for parity tests.

usage: make_checkpoint.py --arch qwen3|qwen2|llama --out DIR [--seed N] [--tied] [--hidden 48] [--heads 4]
       [--kv-heads 2] [--head-dim 16] [--layers 2] [--vocab 96] [--intermediate 80] [--dtype float32|bfloat16]
       [--shard-bytes N] [--llama3-rope] [--rope-style theta|parameters]
"""
import argparse
import json
import os

import torch
import transformers


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=["qwen3", "qwen2", "llama"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tied", action="store_true")
    ap.add_argument("--hidden", type=int, default=48)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=16)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=96)
    ap.add_argument("--intermediate", type=int, default=80)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--shard-bytes", type=int, default=0)
    ap.add_argument("--llama3-rope", action="store_true")
    ap.add_argument("--rope-theta", type=float, default=10000.0)
    return ap


def build(argv: list) -> dict:
    args = parser().parse_args(argv)

    torch.manual_seed(args.seed)
    common = dict(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=512,
        rms_norm_eps=1e-6,
        tie_word_embeddings=args.tied,
        bos_token_id=1,
        eos_token_id=[2, 3],
        pad_token_id=0,
    )
    if args.arch == "qwen3":
        cfg = transformers.Qwen3Config(head_dim=args.head_dim, rope_theta=args.rope_theta, **common)
        cls = transformers.Qwen3ForCausalLM
    elif args.arch == "qwen2":
        if args.head_dim * args.heads != args.hidden:
            raise ValueError("qwen2 derives head_dim from hidden/heads: pass --head-dim hidden/heads")
        cfg = transformers.Qwen2Config(rope_theta=args.rope_theta, **common)
        cls = transformers.Qwen2ForCausalLM
    else:
        extra = {}
        if args.llama3_rope:
            extra["rope_scaling"] = {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
                "rope_theta": args.rope_theta,
            }
        else:
            extra["rope_theta"] = args.rope_theta
        cfg = transformers.LlamaConfig(head_dim=args.head_dim, **common, **extra)
        cls = transformers.LlamaForCausalLM
    model = cls(cfg).eval()
    # Random norm weights and biases too (transformers initialises them to 1 and 0), so a decoder that skipped a
    # norm or a bias would not pass by accident.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(0.15 * torch.randn_like(p))
    model = model.to(getattr(torch, args.dtype))
    kwargs = {}
    if args.shard_bytes:
        kwargs["max_shard_size"] = args.shard_bytes
    model.save_pretrained(args.out, **kwargs)
    with open(os.path.join(args.out, "config.json")) as f:
        json.load(f)  # written and readable
    return {"out": args.out, "files": sorted(os.listdir(args.out))}


if __name__ == "__main__":
    import sys

    print(json.dumps(build(sys.argv[1:])))
