#!/usr/bin/env python3
"""Make the PyTorch fixtures of tests/data/pt/ with a real torch.save.

Needs torch (a scratch virtual environment is enough; the test suite does not):
    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch
    /tmp/tv/bin/python tests/data/pt/make_pt.py tests/data/pt
Writes state.pt, nested.pt, bare.pt, counts.txt (what rounding each tensor to fp16, bf16,
e4m3 and e5m2 does, counted with torch's own conversions) and expected.txt: for every floating-point
tensor, its name, dtype, shape and values (decoded by torch, in C order, as
Python float.hex), and for the integer/bool tensors the line "skip NAME DTYPE".
The readers' tests compare every value bit for bit with this file.
"""
import sys
from collections import OrderedDict

import torch

out = sys.argv[1] if len(sys.argv) > 1 else "."
g = torch.Generator().manual_seed(15)


def randn(*shape, scale=1.0):
    return torch.randn(*shape, generator=g) * scale


lines = []
counts = []
TARGETS = {"fp16": (torch.float16, 2.0**-14), "bf16": (torch.bfloat16, 2.0**-126),
           "e4m3": (torch.float8_e4m3fn, 2.0**-6), "e5m2": (torch.float8_e5m2, 2.0**-14)}


def count(file, name, t):
    """what rounding to each target does, by torch's own conversions from binary32 (RNE):
    underflow, subnormal, overflow (to inf, or for E4M3 beyond 464, which torch saturates)"""
    x = t.detach().to(torch.float32).reshape(-1)
    fin = torch.isfinite(x)
    for fmt, (dt, minnorm) in TARGETS.items():
        y = x.to(dt).to(torch.float32)
        u = int(((x != 0) & fin & (y == 0)).sum())
        s = int(((y != 0) & (y.abs() < minnorm)).sum())
        over = fin & ~torch.isfinite(y)
        if fmt == "e4m3":   # torch saturates to 448 where the format (without saturation) gives NaN: |x| > 464
            over |= fin & (x.abs() > 464)
        o = int(over.sum())
        counts.append(f"{file} {name} {fmt} {u} {s} {o}")


def expect(prefix, obj, file=None):
    """the reader's view of obj: tensors under dotted names, other leaves ignored"""
    if isinstance(obj, torch.Tensor):
        if obj.dtype.is_floating_point:
            if obj.dtype != torch.float64:   # (torch converts binary64 to fp16 through binary32)
                count(file, prefix, obj)
            vals = obj.detach().to(torch.float64).contiguous().view(-1).tolist()
            shape = ",".join(str(s) for s in obj.shape)
            lines.append(f"{prefix} {str(obj.dtype)[6:]} ({shape}) " + " ".join(float.hex(v) for v in vals))
        else:
            lines.append(f"skip {prefix} {str(obj.dtype)[6:]}")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            expect(f"{prefix}.{k}" if prefix else str(k), v, file)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            expect(f"{prefix}.{i}" if prefix else str(i), v, file)


# 1. a state_dict (an OrderedDict with _metadata) with every float dtype, an int64
#    step counter, a bool mask, non-contiguous views and shared storage
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
sd = model.state_dict()
base = randn(4, 5, scale=1e-3)                      # gradient-like: small values
base[0, 0] = 1e-8                                   # underflows in FP16
base[0, 1] = 7e4                                    # overflows FP16
sd["grad.fp32"] = base
sd["grad.fp16"] = randn(3, 4, scale=1e-4).to(torch.float16)
sd["grad.bf16"] = randn(2, 3, scale=1e-30).to(torch.bfloat16)
sd["grad.e4m3"] = randn(8, scale=100).to(torch.float8_e4m3fn)
sd["grad.e5m2"] = randn(8, scale=1e-4).to(torch.float8_e5m2)
sd["grad.fp64"] = randn(2, 2).to(torch.float64) * 1e-300
sd["view.transpose"] = base.t()                     # strides (1, 5) over base's storage
sd["view.slice"] = base[1:, 1:4]                    # offset 6, strides (5, 1)
sd["view.row"] = base[2]                            # contiguous, offset 10, shared storage
sd["view.empty"] = base[4:]                         # shape (0, 5): offset at the storage's end
sd["view.e4m3_step2"] = sd["grad.e4m3"][::2]        # FP8 (an untyped storage, _rebuild_tensor_v3), stride 2
sd["view.e5m2_tail"] = sd["grad.e5m2"][3:]          # FP8, offset 3
sd["step"] = torch.tensor(1234, dtype=torch.int64)
sd["mask"] = torch.tensor([True, False, True])
torch.save(sd, f"{out}/state.pt")
expect("", sd, "state.pt")
lines.append("end state.pt")

# 2. a training checkpoint: nested dicts and lists, an Adam state with int keys,
#    a Parameter, optimizer settings that are not tensors
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = randn(5, 3)
model(x).square().sum().backward()
opt.step()
ck = {
    "model": {"net": model.state_dict()},
    "optim": opt.state_dict(),
    "grads": [p.grad.clone() for p in model.parameters()],
    "pair": (randn(2), torch.nn.Parameter(randn(2, 2))),
    "epoch": 7,
    "name": "run-15",
}
torch.save(ck, f"{out}/nested.pt")
expect("", ck, "nested.pt")
lines.append("end nested.pt")

# 3. a bare tensor: named after the file
bare = randn(3, 2, scale=1e-6).to(torch.float16)
torch.save(bare, f"{out}/bare.pt")
expect("bare", bare, "bare.pt")
lines.append("end bare.pt")

with open(f"{out}/counts.txt", "w") as f:
    f.write(f"# FILE TENSOR FORMAT UNDERFLOW SUBNORMAL OVERFLOW, by torch {torch.__version__} (make_pt.py)\n")
    f.write("\n".join(counts) + "\n")
with open(f"{out}/expected.txt", "w") as f:
    f.write(f"# made by make_pt.py with torch {torch.__version__}\n")
    f.write("\n".join(lines) + "\n")
