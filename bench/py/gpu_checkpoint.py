"""Writes a random Qwen3 checkpoint of a real model's shape with transformers, for the GPU engine bench.

usage: gpu_checkpoint.py --shape qwen3-0.6b|qwen3-4b --out DIR

The shapes are those of Qwen3-0.6B and Qwen3-4B (layers, widths, heads, vocabulary, tied embeddings); the weights are
transformers' own initialisation (normal, std 0.02), built on the GPU when there is one and saved in bfloat16. Only
speed is measured on them: the engine and transformers decode the same checkpoint and prompts.
"""
import argparse
import json

import torch
import transformers

SHAPES = {
    "qwen3-0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=128, tie_word_embeddings=True),
    "qwen3-4b": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=128, tie_word_embeddings=True),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True, choices=sorted(SHAPES))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    cfg = transformers.Qwen3Config(vocab_size=151936, max_position_embeddings=40960, rope_theta=1000000.0,
                                   rms_norm_eps=1e-6, bos_token_id=151643, eos_token_id=151645, pad_token_id=151643,
                                   **SHAPES[args.shape])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = transformers.Qwen3ForCausalLM(cfg).to(torch.bfloat16).eval()
    model.save_pretrained(args.out)
    print(json.dumps({"out": args.out, "parameters": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    main()
