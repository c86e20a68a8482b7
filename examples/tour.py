"""The README's Python tour (tests/check_python.sh runs it in a folder that
holds checkpoint.pt): python3 examples/tour.py"""
import numpy as np

import mpemu

rng = np.random.default_rng(2018)
x = rng.standard_normal((4, 8)).astype(np.float32)
A = rng.standard_normal((32, 64)).astype(np.float32)
B = rng.standard_normal((64, 16)).astype(np.float32)

y = mpemu.round(x, "bf16")                              # bit-exact, x's shape
D = mpemu.gemm(A, B, model="h100", input="e4m3")        # what an H100's FP8 tensor cores give
r = mpemu.analyze("checkpoint.pt")                      # the dict of mpanalyze --json

# what the comments say, checked
assert y.shape == x.shape
assert np.all(y.view(np.uint32) & 0xFFFF == 0)          # BF16 keeps the top 16 bits of binary32
assert D.shape == (32, 16) and np.all(np.isfinite(D))
assert r["tensors"], "no tensor in checkpoint.pt"
print("bf16 of x[0, :3]:", y[0, :3])
print("h100 e4m3 GEMM, D[0, :3]:", D[0, :3])
print("checkpoint.pt:", len(r["tensors"]), "tensors analysed")
