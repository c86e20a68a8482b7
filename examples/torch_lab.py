#!/usr/bin/env python3
"""The PyTorch lab (examples/torch_lab.md): one small classifier trained from the same
initial weights on the same batches in FP32 (torch on the CPU) and with every linear
layer's GEMMs on an emulated tensor core: H100 FP16 AMP with loss scaling, H100 FP8
(E4M3/E5M2, per-tensor scales) and the B200's block-scaled MXFP8 and NVFP4. Prints the
loss curves side by side and the final accuracy of each.

    python3 examples/torch_lab.py                      # the table (about a minute)
    python3 examples/torch_lab.py --recipes fp32,nvfp4 --spread 0   # inputs of one scale
    python3 examples/torch_lab.py --recipes fp32,fp16-amp --json lab.json
"""
import argparse
import json
import sys
import time

import torch
from torch import nn

import mpemu.torch as mt

# name: (model, recipe, loss scaling)
RUNS = {
    "fp32": (None, None, False),
    "fp16-amp": ("h100", "fp16-amp", True),
    "fp8": ("h100", "fp8", False),
    "mxfp8": ("b200", "mxfp8", False),
    "nvfp4": ("b200", "nvfp4", False),
}


def data(seed: int, n: int, dim: int, classes: int, spread: float):
    """Gaussian clusters: class c around a random centre, feature i scaled by 2^s with s running
    from -spread to +spread over the features (the inputs' dynamic range, 2^(2 spread))"""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, dim, generator=g)
    scale = 2.0 ** torch.linspace(-spread, spread, dim)

    def make(m: int):
        y = torch.randint(0, classes, (m,), generator=g)
        x = (centres[y] + 1.2 * torch.randn(m, dim, generator=g)) * scale
        return x, y

    return make(n), make(n // 2)


def train(name: str, a: argparse.Namespace, train_set, test_set) -> dict:
    model_name, recipe, scaled = RUNS[name]
    torch.manual_seed(a.seed)
    net = nn.Sequential(nn.Linear(a.dim, a.hidden), nn.ReLU(), nn.Linear(a.hidden, a.hidden), nn.ReLU(),
                        nn.Linear(a.hidden, a.classes))
    if model_name is not None:
        mt.emulate(net, model=model_name, recipe=recipe)
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=0.9)
    scaler = mt.GradScaler("pytorch", enabled=scaled)
    x, y = train_set
    g = torch.Generator().manual_seed(a.seed + 1)
    losses = []
    t0 = time.perf_counter()
    for step in range(a.steps):
        idx = torch.randint(0, x.shape[0], (a.batch,), generator=g)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x[idx]), y[idx])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(float(loss.detach()))
    seconds = time.perf_counter() - t0
    with torch.no_grad():
        xt, yt = test_set
        acc = float((net(xt).argmax(1) == yt).float().mean())
    return {"losses": losses, "accuracy": acc, "seconds": seconds,
            "skipped": scaler.skipped if scaled else 0, "scale": scaler.get_scale()}


def main() -> int:
    ap = argparse.ArgumentParser(description="train one classifier under emulated tensor-core recipes")
    ap.add_argument("--recipes", default=",".join(RUNS), help="comma-separated: " + ", ".join(RUNS))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=50, help="a loss row every N steps")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--spread", type=float, default=6, help="input features scaled 2^-spread .. 2^spread")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", help="write the curves and results to this file")
    ap.add_argument("--threads", type=int, default=1, help="torch's threads (the layers are small)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    names = [r for r in a.recipes.split(",") if r]
    for r in names:
        if r not in RUNS:
            print(f"torch_lab: unknown recipe {r!r} (valid: {', '.join(RUNS)})", file=sys.stderr)
            return 2
    train_set, test_set = data(a.seed, 4096, a.dim, a.classes, a.spread)
    res = {r: train(r, a, train_set, test_set) for r in names}

    print(f"training loss (mean of the {a.every} steps up to the row's step), same weights and batches:")
    print(f"{'step':>6}" + "".join(f"{r:>11}" for r in names))
    for s in range(a.every, a.steps + 1, a.every):
        print(f"{s:>6}" + "".join(f"{sum(res[r]['losses'][s - a.every:s]) / a.every:>11.4f}" for r in names))
    print()
    print(f"{'recipe':<10} {'GEMMs on':<22} {'test acc':>9} {'final loss':>11} {'skipped':>8} {'seconds':>8}")
    for r in names:
        m, rc, _ = RUNS[r]
        where = "torch FP32 (CPU)" if m is None else f"{m} {rc}"
        tail = res[r]["losses"][-a.every:]
        print(f"{r:<10} {where:<22} {res[r]['accuracy']:>9.3f} {sum(tail) / len(tail):>11.4f} "
              f"{res[r]['skipped']:>8} {res[r]['seconds']:>8.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "results": res}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
