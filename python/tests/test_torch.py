"""mpemu with PyTorch: tensors in and out, the emulated layers against mpe_gemm called
directly on the same operands (FP8 operands encoded by torch's own float8 casts), module
swapping, the straight-through quantiser, the GradScaler replay against
torch.amp.GradScaler, and gradient dumps read back by mpanalyze.

Needs torch (skipped, with one line, where it is not importable)."""
import json
import os
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not importable: the PyTorch tests are skipped")
nn = torch.nn

import mpemu  # noqa: E402
import mpemu.torch as mt  # noqa: E402
from mpemu import _L  # noqa: E402

FP32, FP16, BF16, E4M3, E5M2 = 1, 3, 4, 5, 6
TOP = os.environ.get("MPE_SRCDIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ref_gemm(model, tin, a, at, b, bt, alpha=1.0):
    """mpe_gemm through ctypes on the operands as given (row-major, no transposes)"""
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.float32)
    mod = _L.mpe_tc_model_get(model.encode(), tin)
    assert mod
    rc = _L.mpe_gemm(mod, 0, 0, 0, m, n, k, alpha, a.ctypes.data, at, k, b.ctypes.data, bt, n, 0.0,
                     c.ctypes.data, FP32, n)
    assert rc == 0
    return c


def bits(x):
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def fp8_codes(x, fmt):
    """torch's float8 encoding (nearest-even) of float32 values, as uint8 codes"""
    dt = torch.float8_e4m3fn if fmt == "e4m3" else torch.float8_e5m2
    return np.ascontiguousarray(torch.from_numpy(np.ascontiguousarray(x)).to(dt).view(torch.uint8).numpy())


def p2(x, fmax):
    """the recipe's per-tensor power-of-two scale, from frexp (not mpemu's code)"""
    amax = float(np.abs(x).max())
    m, e = np.frexp(fmax / amax)   # fmax/amax = m * 2^e, 0.5 <= m < 1
    return 2.0 ** (int(e) - 1)


COUNTS = {}


def operands(seed, n=24, din=40, dout=20):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, din, generator=g)
    w = torch.randn(dout, din, generator=g) * 0.2
    gy = torch.randn(n, dout, generator=g) * 1e-3
    return x, w, gy


def run_layer(x, w, gy, model, recipe):
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = mt.linear(xr, wr, None, model=model, recipe=recipe)
    y.backward(gy)
    return y.detach().numpy(), xr.grad.numpy(), wr.grad.numpy()


@pytest.mark.parametrize("model,recipe", [("h100", "fp16"), ("fma-chain", "fp16"), ("a100", "bf16"),
                                          ("h100", "tf32"), ("v100", "fp16")])
def test_linear_plain_equals_mpe_gemm(model, recipe):
    x, w, gy = operands(1)
    y, gx, gw = run_layer(x, w, gy, model, recipe)
    tin = {"fp16": FP16, "bf16": BF16, "tf32": 2}[recipe]
    X, W, G = x.numpy(), w.numpy(), gy.numpy()
    ry = ref_gemm(model, tin, X, FP32, np.ascontiguousarray(W.T), FP32)
    rgx = ref_gemm(model, tin, G, FP32, W, FP32)
    rgw = ref_gemm(model, tin, np.ascontiguousarray(G.T), FP32, X, FP32)
    for a, b in ((y, ry), (gx, rgx), (gw, rgw)):
        assert np.array_equal(bits(a), bits(b))
    COUNTS[f"{model} {recipe}"] = y.size + gx.size + gw.size


@pytest.mark.parametrize("recipe,fmt,npdt", [("fp16-amp", "fp16", np.float16), ("bf16-amp", "bf16", None)])
def test_linear_amp_equals_mpe_gemm_rounded(recipe, fmt, npdt):
    x, w, gy = operands(2)
    y, gx, gw = run_layer(x, w, gy, "h100", recipe)
    tin = FP16 if fmt == "fp16" else BF16
    X, W, G = x.numpy(), w.numpy(), gy.numpy()

    def out(v):   # the FP32 accumulator rounded once: NumPy's float16, or bfloat16 on the bits
        if npdt is not None:
            return v.astype(npdt).astype(np.float32)
        return torch.from_numpy(v).to(torch.bfloat16).float().numpy()

    ry = out(ref_gemm("h100", tin, X, FP32, np.ascontiguousarray(W.T), FP32))
    rgx = out(ref_gemm("h100", tin, G, FP32, W, FP32))
    rgw = out(ref_gemm("h100", tin, np.ascontiguousarray(G.T), FP32, X, FP32))
    for a, b in ((y, ry), (gx, rgx), (gw, rgw)):
        assert np.array_equal(bits(a), bits(b))
    COUNTS[f"h100 {recipe}"] = y.size + gx.size + gw.size


@pytest.mark.parametrize("model", ["h100", "ada", "b200"])
def test_linear_fp8_equals_mpe_gemm(model):
    x, w, gy = operands(3)
    g = torch.Generator().manual_seed(33)
    spread = lambda t: t * 2.0 ** -torch.randint(0, 20, t.shape, generator=g).float()   # noqa: E731
    x, w, gy = spread(x), spread(w), spread(gy) * 1e-4   # values down to FP8's subnormals: the scales matter
    y, gx, gw = run_layer(x, w, gy, model, "fp8")
    X, W, G = x.numpy(), w.numpy(), gy.numpy()
    sx, sw, sg = p2(X, 448.0), p2(W, 448.0), p2(G, 57344.0)
    Xq, Wq, Gq = fp8_codes(X * np.float32(sx), "e4m3"), fp8_codes(W * np.float32(sw), "e4m3"), \
        fp8_codes(G * np.float32(sg), "e5m2")
    ry = ref_gemm(model, E4M3, Xq, E4M3, np.ascontiguousarray(Wq.T), E4M3, 1.0 / (sx * sw))
    rgx = ref_gemm(model, E4M3, Gq, E5M2, Wq, E4M3, 1.0 / (sg * sw))
    rgw = ref_gemm(model, E4M3, np.ascontiguousarray(Gq.T), E5M2, Xq, E4M3, 1.0 / (sg * sx))
    for a, b in ((y, ry), (gx, rgx), (gw, rgw)):
        assert np.array_equal(bits(a), bits(b))
    assert np.abs(gw).max() > 0
    COUNTS[f"{model} fp8"] = y.size + gx.size + gw.size


def test_linear_mx_equals_gemm_scaled():
    """the MXFP8 recipe: mpe_gemm_scaled on codes and scales from mx_quantize, which
    check_mx.c tests against its own reference"""
    x, w, gy = operands(4, din=64)
    y, gx, gw = run_layer(x, w, gy, "b200", "mxfp8")
    X, W, G = x.numpy(), w.numpy(), gy.numpy()
    mod = _L.mpe_tc_model_get(b"b200:mxf8f6f4", E4M3)
    assert mod

    def ref(A, ka, B, kb):   # A (m x k) along rows, B (k x n) along columns, both block-scaled by 32
        ea, sa = mpemu.mx_quantize(A, ka)
        ebt, sbt = mpemu.mx_quantize(np.ascontiguousarray(B.T), kb)
        eb, sb = np.ascontiguousarray(ebt.T), np.ascontiguousarray(sbt.T)
        m, k = A.shape
        n = B.shape[1]
        c = np.zeros((m, n), np.float32)
        ta, tb = (E4M3 if ka.endswith("e4m3") else E5M2), (E4M3 if kb.endswith("e4m3") else E5M2)
        rc = _L.mpe_gemm_scaled(mod, 0, 0, 0, m, n, k, 1.0, ea.ctypes.data, ta, k, eb.ctypes.data, tb, n,
                                sa.ctypes.data, sa.shape[1], sb.ctypes.data, n, 15, 32, 0.0, c.ctypes.data,
                                FP32, n)
        assert rc == 0
        return c

    ry = ref(X, "mxfp8_e4m3", np.ascontiguousarray(W.T), "mxfp8_e4m3")
    rgx = ref(G, "mxfp8_e5m2", W, "mxfp8_e4m3")
    rgw = ref(np.ascontiguousarray(G.T), "mxfp8_e5m2", X, "mxfp8_e4m3")
    for a, b in ((y, ry), (gx, rgx), (gw, rgw)):
        assert np.array_equal(bits(a), bits(b))
    COUNTS["b200 mxfp8"] = y.size + gx.size + gw.size


def test_zz_print_counts():
    """(runs last) the bit-for-bit counts of the tests above"""
    total = sum(COUNTS.values())
    print(f"\nemulated forward/backward equal to mpe_gemm bit for bit: {total} values "
          f"({', '.join(f'{k}: {v}' for k, v in COUNTS.items())})")
    assert total > 0 or not COUNTS


def test_conv2d_equals_gemm_on_unfolded_columns():
    g = torch.Generator().manual_seed(5)
    conv = nn.Conv2d(3, 8, 3, padding=1, stride=2)
    x = torch.randn(2, 3, 9, 9, generator=g)
    e = mt.emulate(conv, model="h100", recipe="fp16")
    y = e(x)
    assert y.shape == conv(x).shape
    cols = torch.nn.functional.unfold(x, 3, padding=1, stride=2).transpose(1, 2).reshape(-1, 27).numpy()
    ref = ref_gemm("h100", FP16, np.ascontiguousarray(cols), FP32,
                   np.ascontiguousarray(conv.weight.detach().reshape(8, -1).numpy().T), FP32)
    ref = ref + conv.bias.detach().numpy()
    got = y.detach().permute(0, 2, 3, 1).reshape(-1, 8).numpy()
    assert np.array_equal(bits(got), bits(ref))
    assert torch.allclose(y, conv(x), rtol=1e-2, atol=1e-2)   # and it is a convolution


def test_emulate_round_trip_restores_the_module():
    torch.manual_seed(6)
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10), nn.ReLU(),
                        nn.Sequential(nn.Linear(10, 3)))
    x = torch.randn(5, 1, 8, 8)
    before = net(x).detach().clone()
    mods = [m for m in net.modules()]
    params = [p for p in net.parameters()]
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    mt.emulate(net, model="h100", recipe="fp16-amp")
    kinds = [type(m).__name__ for m in net.modules()]
    assert kinds.count("EmulatedLinear") == 2 and kinds.count("EmulatedConv2d") == 1
    assert "Linear" not in kinds and "Conv2d" not in kinds
    assert [p for p in net.parameters()] == params   # the same Parameter objects, same order
    out = net(x)
    assert torch.allclose(out, before, rtol=2e-2, atol=2e-2) and not torch.equal(out, before)
    out.sum().backward()
    opt.step()                                        # the optimizer built before the swap trains it
    trained = [p.detach().clone() for p in net.parameters()]
    mt.restore(net)
    assert [m for m in net.modules()] == mods         # the original module objects back
    assert all(torch.equal(p, q) for p, q in zip(net.parameters(), trained))
    for p in net.parameters():
        p.grad = None
    net2 = mt.restore(mt.emulate(net, model="fma-chain", recipe="fp16", skip=["3"]))
    assert [m for m in net2.modules()] == mods
    with pytest.raises(ValueError, match="unknown model 'h10'.*h100"):
        mt.emulate(net, model="h10")
    with pytest.raises(ValueError, match="unknown model 'h100:mxf8f6f4'"):
        mt.emulate(net, model="h100", recipe="mxfp8")   # H100 has no block-scaled tensor cores
    with pytest.raises(ValueError, match="unknown recipe"):
        mt.emulate(net, recipe="fp7")


def test_quantize_straight_through_gradient():
    g = torch.Generator().manual_seed(7)
    x = (torch.randn(1000, generator=g) * 200).requires_grad_()
    up = torch.randn(1000, generator=g)
    y = mt.quantize(x, "e4m3", saturate=True)
    ref = x.detach().clamp(-448, 448).to(torch.float8_e4m3fn).float()   # torch's own E4M3
    assert torch.equal(y, ref)
    y.backward(up)
    assert torch.equal(x.grad, up)                    # straight through, unchanged
    x.grad = None
    mt.quantize(x, "e4m3", saturate=True, clip=True).backward(up)
    over = x.detach().abs() > 448
    assert over.any() and torch.equal(x.grad, torch.where(over, torch.zeros_like(up), up))
    x2 = torch.randn(4, 64, generator=g).requires_grad_()
    y2 = mt.quantize(x2, "mxfp8_e4m3")
    assert torch.equal(y2, mpemu.mx_round(x2.detach(), "mxfp8_e4m3"))
    y2.sum().backward()
    assert torch.equal(x2.grad, torch.ones_like(x2))
    with pytest.raises(ValueError, match="unknown format 'e4m4'.*e2m1"):
        mt.quantize(x, "e4m4")


def train_loop(scaler, steps, inject, seed=8):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(seed + 1)
    data = [(torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g)) for _ in range(steps)]
    trace = []
    for step, (x, y) in enumerate(data):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        scaler.scale(loss).backward()
        if step in inject:                            # an overflow in one gradient element
            net[0].weight.grad[1, 2] = float("inf") if step % 2 else float("nan")
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), [p.detach().clone() for p in net.parameters()]))
    return trace


def test_scaler_replay_equals_torch_gradscaler():
    steps, inject = 40, {3, 4, 11, 12, 13, 30}
    kw = dict(init_scale=2.0**12, growth_interval=3)
    ref = train_loop(torch.amp.GradScaler("cpu", **kw), steps, inject)
    ours = mt.GradScaler("pytorch", **kw)
    got = train_loop(ours, steps, inject)
    same = 0
    for (s1, p1), (s2, p2_) in zip(ref, got):
        assert s1 == s2
        assert all(torch.equal(a, b) for a, b in zip(p1, p2_))
        same += 1
    scales = [s for s, _ in ref]
    assert min(scales) < 2.0**12 < max(scales)        # backed off and grew
    assert ours.skipped == len(inject) and ours.steps == steps
    print(f"\nGradScaler replay equal to torch.amp.GradScaler: {same} of {steps} steps "
          f"(scale and parameters bit for bit; {len(inject)} overflows injected)")


def test_tensors_in_and_out():
    t = torch.randn(6, 7)
    a = mpemu._np(t)
    assert np.shares_memory(a, t.numpy())              # no copy for contiguous float32
    y = mpemu.round(t, "bf16")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    assert torch.equal(y, t.to(torch.bfloat16).float())
    assert isinstance(mpemu.round(t.numpy(), "fp16"), np.ndarray)
    assert torch.equal(mpemu.round(t.double(), "fp16"), torch.from_numpy(mpemu.round(t.double().numpy(), "fp16")))
    c = mpemu.encode(t, "e4m3")
    assert isinstance(c, torch.Tensor) and torch.equal(c, t.to(torch.float8_e4m3fn).view(torch.uint8))
    assert torch.equal(mpemu.decode(c, "e4m3"), t.to(torch.float8_e4m3fn).float())
    A, B = torch.randn(5, 33), torch.randn(33, 4)
    D = mpemu.gemm(A, B, model="h100", input="fp16")
    assert isinstance(D, torch.Tensor) and np.array_equal(D.numpy(), mpemu.gemm(A.numpy(), B.numpy()))
    assert isinstance(mpemu.gemm(A.to(torch.bfloat16), B, input="bf16"), torch.Tensor)
    r = mpemu.range_report(t * 1e-6)
    assert r == mpemu.range_report(t.numpy() * np.float32(1e-6))
    e, s = mpemu.mx_quantize(torch.randn(3, 64), "nvfp4")
    assert isinstance(e, torch.Tensor) and e.dtype == torch.uint8 and tuple(s.shape) == (3, 4)
    q, sc, z = mpemu.quantize_int(t, "int8", "rows")
    assert q.dtype == torch.int8 and tuple(sc.shape) == (6,)
    Ai = torch.randint(-128, 128, (4, 16), dtype=torch.int8)
    Bi = torch.randint(-128, 128, (16, 3), dtype=torch.int8)
    Di = mpemu.gemm_int(Ai, Bi, model="a100")
    assert Di.dtype == torch.int32 and torch.equal(Di, Ai.int() @ Bi.int())
    P = mpemu.prune_2_4(torch.randn(4, 16))
    assert isinstance(mpemu.gemm_sp(P, torch.randn(16, 2), model="exact", input="fp16"), torch.Tensor)
    fq, fs = mpemu.fx16_encode(t, block=8)
    assert fq.dtype == torch.int16 and isinstance(mpemu.fx16_decode(fq, fs, block=8), torch.Tensor)
    tg = torch.randn(3, 3, requires_grad=True)        # autograd tensors: their values
    assert isinstance(mpemu.round(tg, "fp16"), torch.Tensor)
    with pytest.raises(ValueError, match="unknown model 'h1000'.*h100"):
        mpemu.gemm(A, B, model="h1000")


def mpanalyze():
    for p in (os.environ.get("MPANALYZE"), os.path.join(TOP, "mpanalyze")):
        if p and os.access(p, os.X_OK):
            return p
    return None


@pytest.mark.parametrize("fmt", ["safetensors", "pt"])
def test_gradient_dump_read_by_mpanalyze(tmp_path, fmt):
    if fmt == "safetensors":
        pytest.importorskip("safetensors", reason="safetensors is not importable")
    torch.manual_seed(9)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    paths, maxes = [], []
    with mt.GradientDump(net, str(tmp_path), format=fmt) as dump:
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(torch.randn(4, 8)), torch.randint(0, 3, (4,))).backward()
            paths.append(dump.step())
            maxes.append({n: float(p.grad.abs().max()) for n, p in net.named_parameters()})
            opt.step()
    assert all(p and os.path.exists(p) for p in paths)
    r = mpemu.analyze(paths[-1], formats=["fp16", "e5m2"])
    got = {t["name"]: t for t in r["tensors"]}
    assert sorted(got) == sorted(n for n, _ in net.named_parameters())
    for n, p in net.named_parameters():
        assert got[n]["count"] == p.numel() and got[n]["max_abs"] == maxes[-1][n]
    tool = mpanalyze()
    if tool is None:
        pytest.skip("no mpanalyze built (MPANALYZE names it)")
    out = subprocess.run([tool, "--json", "--format", "fp16,e5m2", paths[-1]], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tensors"] == r["tensors"]
