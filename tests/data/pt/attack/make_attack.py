#!/usr/bin/env python3
"""Make the attack files tests/data/pt/attack/*.pt (standard library only).

Each is a torch.save-like zip whose pickle is legal for torch.load but was
mishandled by analysis/io_pt.c when it was written:
    python3 tests/data/pt/attack/make_attack.py tests/data/pt/attack
"""
import os
import struct
import sys
import zipfile

out = sys.argv[1] if len(sys.argv) > 1 else "."


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pickle_asm  # noqa: E402
from pickle_asm import glob, i, s, state, storage, tensor, tup  # noqa: E402,F401


def archive(name, pkl, storages=None, top="archive", comp=zipfile.ZIP_STORED):
    pickle_asm.archive(out, name, pkl, storages, top, comp=comp)


data0 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
data1 = struct.pack("<6f", 7, 8, 9, 10, 11, 12)

# the same key set twice in one dict: torch.load keeps the last value (w = 7..12)
archive("dup_key.pt", state(s("w"), tensor(), s("w"), tensor(st=storage(key="1"))), {"0": data0, "1": data1})
# a broadcast (stride 0) view of one element, 2^62 elements: torch.load gives an expanded tensor
archive("broadcast_huge.pt", state(s("w"), tensor(st=storage(numel=1), size=(2**31, 2**31), stride=(0, 0))),
        {"0": data0[:4]})
# an empty tensor whose storage offset lies past its storage (torch accepts any offset for 0 elements)
archive("empty_far_offset.pt", state(s("w"), tensor(offset=2**40, size=(0, 3), stride=(3, 1))), {"0": data0})
# names: a key "a.b" and a dict a holding b: both tensors are called a.b
archive("name_clash.pt", state(s("a.b"), tensor(), s("a"), b"}" + s("b") + tensor(st=storage(key="1")) + b"s"),
        {"0": data0, "1": data1})
# one tensor listed under 100000 names of 1000 bytes each (a list of 1-tuples of memo gets, so that
# every reference is a new value): 400 kB of pickle, 1 kB of zip, and 200 MB of names in the reader
key = "k" * 1000
archive("name_bomb.pt", b"\x80\x02}" + s(key) + b"]" + tensor() + b"q\x00a" + b"h\x00\x85a" * 100000 + b"s.",
        {"0": data0}, comp=zipfile.ZIP_DEFLATED)
# a list of 50000 integers referred to 200000 times: walking it looks at 10^10 leaves, each
# reference counted as one visit (the leaves not at all)
archive("leaf_walk.pt", b"\x80\x02]" + b"(" + b"K\x07" * 50000 + b"eq\x00" + b"]" + b"h\x00a" * 200000 + b"\x86.",
        comp=zipfile.ZIP_DEFLATED)
# 5 million empty tuples made and dropped: 10 MB of pickle in a 10 kB file, 120 MB of values
archive("value_flood.pt", b"\x80\x02" + b")0" * 5000000 + b"N.", comp=zipfile.ZIP_DEFLATED)
