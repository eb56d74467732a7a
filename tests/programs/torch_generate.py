"""Greedy generation with a transformers Llama-architecture model: the
workload people run through Gleam. Random weights from a fixed seed, saved
with safetensors to a local directory first (no downloads), then loaded the
way users load a model and run on the GPU. Prints the generated token ids and
timings (timings go to stderr so stdout compares byte for byte).

  python3 torch_generate.py [--size tiny|1b|8b] [--dir DIR] [--tokens N]
"""
import argparse
import os
import sys
import time

import torch
import transformers

SIZES = {
    # ~30 M parameters: the routine check.
    "tiny": dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                 num_attention_heads=8, num_key_value_heads=4, vocab_size=8192),
    # ~1.1 B parameters (TinyLlama-1.1B shape).
    "1b": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
               num_attention_heads=32, num_key_value_heads=4, vocab_size=32000),
    # ~8 B parameters (Llama-3-8B shape), 16 GB in fp16.
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, vocab_size=128256),
}


def model_dir(size, base):
    return os.path.join(base, f"gleam-llama-{size}")


def ensure_saved(size, path):
    """Creates the model directory once (on the CPU, no GPU needed)."""
    if os.path.exists(os.path.join(path, "config.json")):
        return
    torch.manual_seed(1234)
    cfg = transformers.LlamaConfig(max_position_embeddings=2048,
                                   torch_dtype="float16", **SIZES[size])
    if size == "8b" and torch.cuda.is_available():
        # Initialising 8 B parameters in fp32 on the CPU takes minutes and
        # 32 GB; in fp16 on a local GPU it takes seconds. Only this creation
        # step touches the GPU, before any run that is measured.
        torch.set_default_dtype(torch.float16)
        with torch.device("cuda"):
            model = transformers.LlamaForCausalLM(cfg)
        torch.set_default_dtype(torch.float32)
    else:
        model = transformers.LlamaForCausalLM(cfg).to(torch.float16)
    model.save_pretrained(path, safe_serialization=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="tiny", choices=sorted(SIZES))
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--save-only", action="store_true")
    args = ap.parse_args()
    path = model_dir(args.size, args.dir)
    ensure_saved(args.size, path)
    if args.save_only:
        return
    t0 = time.monotonic()
    model = transformers.LlamaForCausalLM.from_pretrained(
        path, torch_dtype=torch.float16).cuda()
    torch.cuda.synchronize()
    t_load = time.monotonic() - t0
    model.eval()
    prompt = torch.tensor([[1, 450, 4996, 1735, 1701, 2991, 432, 1720]],
                          device="cuda")
    with torch.no_grad():
        t1 = time.monotonic()
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                             max_new_tokens=args.tokens, min_new_tokens=args.tokens,
                             do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
        t_gen = time.monotonic() - t1
    tokens = out[0, prompt.shape[1]:].tolist()
    print("size:", args.size)
    print("generated:", " ".join(str(t) for t in tokens))
    print("done")
    print(f"timing size={args.size} load_s={t_load:.3f} generate_s={t_gen:.3f} "
          f"tokens_per_s={len(tokens) / t_gen:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
