"""Vision models through cuDNN: a torchvision ResNet-50 forward in fp32 and in
fp16 (random weights from a fixed seed, a fixed input) and one training step
(forward, backward, SGD) of a small CNN with batch normalization. Prints one
line per check, "NAME ok <checksum>" or "NAME error <exception>", then
"done", so that a local run and a run through Gleam compare line by line
(deploy/gpu-check.sh). cuDNN runs deterministically
(torch.backends.cudnn.deterministic = True, benchmark = False), so the
checksums (float64 sums and a hash of the bytes) are bit-exact between
runs of the same kernels. Timings go to stderr.

Usage: torch_vision.py [--batch N] [--size PIXELS] [--repeat N] [NAME ...] (default: all)."""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

from torch_ops import run


def fixed_input(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).cuda()


def resnet50(dtype, batch, size, repeat=1):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet50().cuda().eval().to(dtype)
    x = fixed_input(batch, 3, size, size, dtype=dtype)
    with torch.no_grad():
        m(x)  # the first run picks and builds the cuDNN plans
        torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(repeat):
            y = m(x)
        torch.cuda.synchronize()
    seconds = (time.time() - t0) / repeat
    print("timing resnet50 %s: %.1f ms a forward of %d images, %.1f images/s" %
          (str(dtype).replace("torch.", ""), seconds * 1e3, batch, batch / seconds),
          file=sys.stderr)
    return y


def check_resnet50_fp32(args):
    return resnet50(torch.float32, args.batch, args.size, args.repeat)


def check_resnet50_fp16(args):
    return resnet50(torch.float16, args.batch, args.size, args.repeat)


def check_cnn_train_step(args):
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1, stride=2), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = fixed_input(8, 3, 32, 32)
    target = torch.arange(8, device="cuda") % 10
    opt.zero_grad()
    loss = F.cross_entropy(m(x), target)
    loss.backward()
    opt.step()
    # The updated weights and the batch-norm running statistics.
    state = [p.detach().flatten() for p in m.parameters()]
    state += [b.detach().float().flatten() for b in m.buffers()]
    return [loss.detach().reshape(1), torch.cat(state)]


CHECKS = [(n[len("check_"):], f) for n, f in sorted(globals().items()) if n.startswith("check_")]

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4, help="images per ResNet-50 forward")
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    ap.add_argument("--repeat", type=int, default=1, help="timed forwards (after one untimed)")
    ap.add_argument("names", nargs="*", help="checks to run (default: all)")
    args = ap.parse_args()
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    print("cudnn", torch.backends.cudnn.is_available(), flush=True)
    run([(name, lambda fn=fn: fn(args)) for name, fn in CHECKS], set(args.names), width=200)
