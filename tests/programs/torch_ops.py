"""Everyday PyTorch operations, each on its own: prints one line per
operation, "NAME ok <checksum>" or "NAME error <exception type>: <first line>",
so that a local run and a run through Gleam compare line by line. Inputs come
from fixed seeds; the checksums are float64 sums of the outputs (exact for
deterministic kernels). Usage: torch_ops.py [NAME ...] (default: all)."""
import hashlib
import sys

import torch
import torch.nn.functional as F


def checksum(t):
    if isinstance(t, (tuple, list)):
        return " ".join(checksum(x) for x in t)
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    if t.is_complex():
        t = torch.view_as_real(t)
    data = t.contiguous().cpu()
    digest = hashlib.sha256(data.numpy().tobytes()).hexdigest()[:16]
    return "%.9g/%s" % (float(data.double().sum()), digest)


def gen(seed):
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return g


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=gen(seed)).to(dtype).cuda()


def op_gemv():
    a, v = randn(64, 48), randn(48, seed=1)
    return a @ v


def op_gemv_t():
    a, v = randn(64, 48), randn(64, seed=1)
    return a.t() @ v


def op_addmv():
    return torch.addmv(randn(64, seed=2), randn(64, 48), randn(48, seed=1), beta=0.5, alpha=2)


def op_dot():
    return torch.dot(randn(1000), randn(1000, seed=1))


def op_ger():
    return torch.outer(randn(33), randn(17, seed=1))


def op_solve_triangular():
    a = torch.tril(randn(32, 32)) + 8 * torch.eye(32, device="cuda")
    return torch.linalg.solve_triangular(a, randn(32, 5, seed=1), upper=False)


def op_conv2d():
    torch.backends.cudnn.deterministic = True
    return F.conv2d(randn(2, 3, 16, 16), randn(8, 3, 3, 3, seed=1), padding=1)


def op_conv2d_half():
    torch.backends.cudnn.deterministic = True
    return F.conv2d(randn(2, 8, 16, 16, dtype=torch.float16),
                    randn(16, 8, 3, 3, seed=1, dtype=torch.float16), padding=1)


def op_batch_norm():
    # cuDNN's batch normalization: a training forward and backward, then an
    # inference forward with the running statistics it updated.
    torch.backends.cudnn.deterministic = True
    x = randn(4, 8, 12, 12).requires_grad_()
    bn = torch.nn.BatchNorm2d(8).cuda().train()
    y = bn(x)
    y.backward(randn(4, 8, 12, 12, seed=1))
    bn.eval()
    with torch.no_grad():
        z = bn(randn(4, 8, 12, 12, seed=2))
    return [y, x.grad, bn.weight.grad, bn.running_mean, bn.running_var, z]


def op_resnet18():
    import torchvision
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    m = torchvision.models.resnet18().cuda().eval()
    with torch.no_grad():
        return m(randn(2, 3, 64, 64))


def op_cnn_train():
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 14 * 14, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    loss = F.cross_entropy(m(randn(4, 3, 16, 16)), torch.tensor([1, 2, 3, 4], device="cuda"))
    loss.backward()
    opt.step()
    return torch.cat([p.detach().flatten() for p in m.parameters()])


def op_stft():
    return torch.stft(randn(4096), 256, return_complex=True, window=torch.hann_window(256).cuda())


def op_linalg_solve():
    a = randn(16, 16) + 16 * torch.eye(16, device="cuda")
    return torch.linalg.solve(a, randn(16, 3, seed=1))


def op_eigvalsh():
    a = randn(16, 16)
    return torch.linalg.eigvalsh(a + a.t())


def op_sparse_mm():
    i = torch.tensor([[0, 1, 2, 5], [3, 0, 7, 1]])
    v = torch.tensor([1.0, 2.0, 3.0, 4.0])
    s = torch.sparse_coo_tensor(i, v, (8, 8)).cuda()
    return torch.sparse.mm(s, randn(8, 4))


def op_eigh():
    a = randn(24, 24)
    w, v = torch.linalg.eigh(a + a.t())
    # Eigenvectors are defined up to sign: compare v diag(w) v^T instead.
    return [w, v @ torch.diag(w) @ v.t()]


def op_cholesky():
    a = randn(16, 16)
    return torch.linalg.cholesky(a @ a.t() + 16 * torch.eye(16, device="cuda"))


def op_qr():
    q, r = torch.linalg.qr(randn(20, 12))
    return q @ r


def op_inv():
    return torch.linalg.inv(randn(12, 12) + 12 * torch.eye(12, device="cuda"))


def op_svdvals():
    return torch.linalg.svdvals(randn(16, 10))


def op_sparse_csr_mv():
    d = randn(16, 12) * (randn(16, 12, seed=3) > 0.8)
    return d.to_sparse_csr() @ randn(12, seed=1)


def op_sparse_csr_mm():
    d = randn(16, 12) * (randn(16, 12, seed=3) > 0.7)
    return torch.addmm(randn(16, 5, seed=2), d.to_sparse_csr(), randn(12, 5, seed=1))


def op_lstm():
    # cuDNN's RNN API: an LSTM forward and backward.
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True).cuda()
    x = randn(4, 10, 16).requires_grad_()
    out, (h, c) = lstm(x)
    out.sum().backward()
    return [out, h, c, x.grad, lstm.weight_ih_l0.grad]


def op_gru():
    torch.manual_seed(0)
    gru = torch.nn.GRU(8, 16, bidirectional=True).cuda().eval()
    with torch.no_grad():
        out, h = gru(randn(6, 3, 8))
    return [out, h]


def op_ctc_loss():
    # The cuDNN path: int32 targets on the CPU, every input length T,
    # blank 0, float32 log-probabilities.
    t, n, c = 30, 4, 10
    logp = randn(t, n, c).log_softmax(2).requires_grad_()
    targets = torch.randint(1, c, (n * 5,), generator=gen(4), dtype=torch.int32)
    loss = F.ctc_loss(logp, targets, torch.full((n,), t, dtype=torch.int32),
                      torch.full((n,), 5, dtype=torch.int32), reduction="sum")
    loss.backward()
    return [loss, logp.grad]


def op_grid_sample():
    theta = torch.tensor([[[0.9, -0.1, 0.05], [0.1, 0.8, -0.05]]] * 2, device="cuda")
    grid = F.affine_grid(theta, (2, 3, 16, 16), align_corners=True)
    return F.grid_sample(randn(2, 3, 16, 16), grid, align_corners=True)


def op_compile():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).cuda()
    return torch.compile(m)(randn(4, 32))


def op_pynvml():
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    name = pynvml.nvmlDeviceGetName(h)
    total = pynvml.nvmlDeviceGetMemoryInfo(h).total
    print("pynvml name", name, "total", total)
    return torch.tensor([float(total)])


OPS = [(n[3:], f) for n, f in sorted(globals().items()) if n.startswith("op_")]


def run(checks, wanted, width=160):
    """Runs each (name, function) of `checks` whose name is in `wanted`
    (empty: all), printing "NAME ok <checksum>" or "NAME error <exception
    type>: <first line, at most `width` characters>", then "done"."""
    for name, fn in checks:
        if wanted and name not in wanted:
            continue
        try:
            out = fn()
            torch.cuda.synchronize()
            print(name, "ok", checksum(out), flush=True)
        except Exception as e:  # one failing operation must not hide the others
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(name, "error", type(e).__name__ + ":", first[:width], flush=True)
    print("done")


if __name__ == "__main__":
    run(OPS, set(sys.argv[1:]))
