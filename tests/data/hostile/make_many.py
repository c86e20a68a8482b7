#!/usr/bin/env python3
"""Files holding very many tensors (issue 14: per-tensor overhead), made at test
time rather than committed (each is megabytes):
    make_many.py OUTDIR [N [KIND...]]     KIND: empty tiny npz pt (default: all)
writes OUTDIR/many_empty.safetensors (N empty F32 tensors), many_tiny.safetensors
(N one-value tensors), many.npz (min(N, 100000) one-value members: the reader's
member limit) and many.pt (N one-value tensors, views four to a storage of four
values: a zip archive may hold at most 100000 members). Standard library only."""
import io
import json
import os
import struct
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pt"))
import pickle_asm as pa  # noqa: E402

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
kinds = sys.argv[3:] or ["empty", "tiny", "npz", "pt"]


def st(name, entries, data):
    h = json.dumps(entries, separators=(",", ":")).encode()
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


if "empty" in kinds:
    st("many_empty.safetensors",
       {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(n)}, b"")
if "tiny" in kinds:
    st("many_tiny.safetensors",
       {f"layer.{i}.weight": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i in range(n)},
       struct.pack("<f", 1.0) * n)


def npy1(v):
    hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
    hdr += b" " * (63 - len(hdr)) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + struct.pack("<f", v)


if "npz" in kinds:
    with pa.Zip(os.path.join(out, "many.npz"), "w", zipfile.ZIP_STORED) as z:
        one = npy1(1.0)
        for i in range(min(n, 100000)):
            z.writestr(f"m{i}.npy", one)

if "pt" not in kinds:
    sys.exit(0)
pk = io.BytesIO()
pk.write(b"\x80\x02}(")
for i in range(n):
    st = pa.storage(key=str(i // 4), numel=4)
    pk.write(pa.s(f"layer.{i}.weight") + pa.tensor(st, offset=i % 4, size=(1,), stride=(1,)))
    if i % 1000 == 999:   # SETITEMS in batches, as pickle does
        pk.write(b"u(")
pk.write(b"u.")
four = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)
pa.archive(out, "many.pt", pk.getvalue(), {str(k): four for k in range((n + 3) // 4)})
