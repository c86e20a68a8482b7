#!/usr/bin/env python3
"""Benchmark: an emulated nn.Linear (mpemu.torch.emulate) forward + backward against torch's
own FP32 CPU nn.Linear on the same layer and batch, in the same run.

    PYTHONPATH=python python3 python/bench_linear.py            # from the repository
    python3 python/bench_linear.py --batch 256 --din 512 --dout 512 --reps 5

Every row is the median of --reps timed passes (one untimed pass first) of forward, loss and
backward; "x torch" is the row's time over torch's. `make bench` runs it when torch is
importable and prints one "skipped" line otherwise. Threads: torch's own (torch.get_num_threads())
and the library's OpenMP team (OMP_NUM_THREADS).
"""
import argparse
import statistics
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--din", type=int, default=256)
    ap.add_argument("--dout", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    try:
        import torch
        import mpemu.torch as mt   # mpemu needs NumPy
    except ImportError as e:
        print(f"bench_linear: {e.name} is not importable: skipped (pip install torch numpy, or PYTHON= a python "
              "with them)")
        return 0

    torch.manual_seed(0)
    x = torch.randn(a.batch, a.din)
    macs = 3 * a.batch * a.din * a.dout   # forward, dgrad, wgrad

    def timed(layer: torch.nn.Module) -> float:
        xs = x.clone().requires_grad_()

        def once() -> None:
            layer.zero_grad()
            xs.grad = None
            layer(xs).square().mean().backward()

        once()
        ts = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            once()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    lin = torch.nn.Linear(a.din, a.dout)
    ref = timed(lin)
    print(f"\nnn.Linear {a.din}->{a.dout}, batch {a.batch}: forward + backward (3 GEMMs, {macs / 1e6:.1f} M "
          f"multiply-adds), median of {a.reps}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'layer':<28} {'s':>9} {'x torch':>9} {'M MAC/s':>9}")
    print(f"{'torch FP32 (CPU)':<28} {ref:9.4f} {1.0:9.1f} {macs / ref / 1e6:9.0f}")
    for model, recipe in (("fma-chain", "fp16"), ("h100", "fp16"), ("h100", "fp16-amp"), ("h100", "fp8")):
        t = timed(mt.emulate(torch.nn.Linear(a.din, a.dout), model=model, recipe=recipe))
        print(f"{'emulated ' + model + ' ' + recipe:<28} {t:9.4f} {t / ref:9.1f} {macs / t / 1e6:9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
