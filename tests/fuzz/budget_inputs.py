#!/usr/bin/env python3
"""Hostile inputs for tests/fuzz/budget.sh: each small on disk (sparse or
compressed where it can be) and each asking the path that reads it to hold far
more than 64 MiB if it held what it reads. Standard library only.
    budget_inputs.py OUTDIR [NAME...]      (default: all)"""
import json
import os
import struct
import sys
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "data", "pt"))
import pickle_asm as pa  # noqa: E402

out = sys.argv[1]
want = set(sys.argv[2:])
BIG = 1 << 26            # values: 256 MiB of float32
made = []


def make(name):
    def deco(fn):
        if not want or name in want:
            fn(os.path.join(out, name))
            made.append(name)
        return fn
    return deco


def npy_header(shape, fortran=False, descr="<f4"):
    h = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, fortran, "".join("%d, " % d for d in shape) if len(shape) > 1 else "%d," % shape[0])
    pad = 64 - (10 + len(h) + 1) % 64
    h = h.encode() + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h


def sparse(path, head, nbytes):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + nbytes)


@make("big.npy")                 # 2^26 values in one C-order tensor, holes on disk
def _(p):
    sparse(p, npy_header((BIG,)), 4 * BIG)


@make("big_fortran.npy")         # the same in Fortran order, two dimensions
def _(p):
    sparse(p, npy_header((1 << 13, 1 << 13), True), 4 * BIG)


@make("big.raw")                 # 256 MiB of float32 holes
def _(p):
    sparse(p, b"", 4 * BIG)


@make("big.txt")                 # 64 MiB of text on one line: "0 0 0 ..."
def _(p):
    with open(p, "wb") as f:
        f.write(b"0 " * (BIG // 2) + b"\n")


@make("bomb.npz")                # one member of 256 MiB of zeros, deflated to ~256 kB
def _(p):
    with pa.Zip(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("w.npy", npy_header((BIG,)) + bytes(4 * BIG))


@make("many.npz")                # 100,000 members of one value (the member limit)
def _(p):
    hdr = npy_header((1,)) + struct.pack("<f", 1.0)
    with pa.Zip(p, "w", zipfile.ZIP_STORED) as z:
        for i in range(100000):
            z.writestr("m%d.npy" % i, hdr)


def st(p, entries, data=b""):
    h = json.dumps(entries, separators=(",", ":")).encode()
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


@make("meta_90m.safetensors")    # a 90 MB header: one __metadata__ string, one small tensor
def _(p):
    st(p, {"__metadata__": {"x": "y" * (90 << 20)}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
       struct.pack("<f", 1.0))


@make("keys_90m.safetensors")    # a 90 MB header: 1.5 million __metadata__ keys
def _(p):
    st(p, {"__metadata__": {"k%07d%s" % (i, "k" * 40): "" for i in range(1500000)},
           "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, struct.pack("<f", 1.0))


@make("many_empty.safetensors")  # 600,000 empty tensors (a 40 MB header)
def _(p):
    st(p, {"t%d" % i: {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(600000)})


@make("big.safetensors")         # one tensor of 2^26 values, holes on disk
def _(p):
    h = json.dumps({"w": {"dtype": "F32", "shape": [BIG], "data_offsets": [0, 4 * BIG]}}).encode()
    sparse(p, struct.pack("<Q", len(h)) + h, 4 * BIG)


def listed(p, n):
    """one 6-value tensor listed n times (w.0, w.1.0, ...)"""
    pa.archive(os.path.dirname(p), os.path.basename(p),
               b"\x80\x02}" + pa.s("w") + b"]" + pa.tensor() + b"q\x00a" + b"h\x00\x85a" * n + b"s.",
               {"0": struct.pack("<6f", 1, 2, 3, 4, 5, 6)}, comp=zipfile.ZIP_DEFLATED)


@make("listed_2m.pt")            # one tensor listed 2 million times: 8 MB of pickle, 8 kB of zip
def _(p):
    listed(p, 2000000)


@make("view_256m.pt")            # a transposed view of a 256 MiB storage of zeros (deflated)
def _(p):
    pa.archive(os.path.dirname(p), os.path.basename(p),
               pa.state(pa.s("w"), pa.tensor(st=pa.storage(numel=BIG), size=(1 << 13, 1 << 13),
                                             stride=(1, 1 << 13))),
               {"0": bytes(4 * BIG)}, comp=zipfile.ZIP_DEFLATED)


@make("broadcast_64.pt")         # 64 broadcast views of 2^30 values over one stored value
def _(p):
    pa.archive(os.path.dirname(p), os.path.basename(p),
               pa.state(*[pa.s("w%d" % k) + pa.tensor(st=pa.storage(numel=1), size=(2**15, 2**15), stride=(0, 0))
                          for k in range(64)]), {"0": struct.pack("<f", 1.0)})


@make("flood.pt")                # 20 million empty tuples made and dropped: 40 MB of pickle (deflated)
def _(p):
    pa.archive(os.path.dirname(p), os.path.basename(p), b"\x80\x02" + b")0" * 20000000 + b"N.",
               comp=zipfile.ZIP_DEFLATED)


@make("memo_wide.pt")            # a memo index of 2^31: a memo table sized by the index would be 8 GiB
def _(p):
    pa.archive(os.path.dirname(p), os.path.basename(p),
               b"\x80\x02)r" + struct.pack("<I", 1 << 31) + b"0N.", comp=zipfile.ZIP_DEFLATED)


@make("dense_20000.mtx")         # an order-20000 matrix of one entry per row: dense, 3.2 GB
def _(p):
    with open(p, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n20000 20000 20000\n")
        f.writelines("%d %d 1\n" % (i, i) for i in range(1, 20001))


@make("nnz_6m.mtx")              # 6 million entries of order 3000: CSR ~72 MB, dense 72 MB
def _(p):
    n = 3000
    with open(p, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (n, n, 6000000))
        for k in range(6000000):
            f.write("%d %d 1\n" % (k % n + 1, (k // n) % n + 1))


@make("nnz_declared.mtx")        # 2^31 - 1 entries declared, one present
def _(p):
    with open(p, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n100000 100000 2147483647\n1 1 1\n")


for name in made:
    print(name)
