"""PyTorch smoke test: runs the same tensor work locally or through Gleam and
prints results that must match byte for byte (deterministic ops only)."""
import sys

import torch

torch.manual_seed(0)
print("cuda available:", torch.cuda.is_available())
print("device count:", torch.cuda.device_count())
print("device name:", torch.cuda.get_device_name(0))
x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
y = x * 2.5 + 1.0
print("elementwise sum:", y.sum().item())
print("max:", y.max().item(), "argmax:", y.argmax().item())
z = torch.sin(x[:1024]).cpu()
print("sin checksum:", float(z.double().sum()))
r = torch.randn(256, 256, device="cuda")
print("randn mean:", float(r.mean().item()))
back = r.cpu()
print("round trip equal:", bool(torch.equal(back.cuda().cpu(), back)))
if "--linear" in sys.argv:
    lin = torch.nn.Linear(64, 32).cuda()
    out = lin(torch.ones(8, 64, device="cuda"))
    print("linear checksum:", float(out.double().sum().item()))
if "--blas" in sys.argv:
    # cuBLAS / cuBLASLt through PyTorch: fp32 and bf16 matmul, batched
    # matmul, addmm with a bias (the cuBLASLt epilogue path).
    a = torch.randn(96, 128, device="cuda")
    b = torch.randn(128, 80, device="cuda")
    print("mm fp32 checksum:", float((a @ b).double().sum().item()))
    ab, bb = a.bfloat16(), b.bfloat16()
    print("mm bf16 checksum:", float((ab @ bb).double().sum().item()))
    p = torch.randn(4, 32, 48, device="cuda", dtype=torch.float16)
    q = torch.randn(4, 48, 16, device="cuda", dtype=torch.float16)
    print("bmm fp16 checksum:", float(torch.bmm(p, q).double().sum().item()))
    bias = torch.randn(80, device="cuda")
    print("addmm checksum:", float(torch.addmm(bias, a, b).double().sum().item()))
print("done")
