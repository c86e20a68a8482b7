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

# --- limits kept everywhere (--max-memory, caps across tensors, longer members)
# a transposed view of a 64 MiB storage of zeros, deflated to 64 kB: reading it holds the
# storage in memory, which a memory limit must refuse before allocating
archive("big_view.pt", state(s("w"), tensor(st=storage(numel=1 << 24), size=(4096, 4096), stride=(1, 4096))),
        {"0": bytes(1 << 26)}, comp=zipfile.ZIP_DEFLATED)
# 64 broadcast views of 2^30 elements over one stored value: each within the per-view limit,
# 2^36 elements in all
archive("broadcast_many.pt", state(*[s("w%d" % k) + tensor(st=storage(numel=1), size=(2**15, 2**15), stride=(0, 0))
                                     for k in range(64)]), {"0": data0[:4]})
# one broadcast view of 2^30 elements (the per-view limit) over one stored value: order would
# hold 4 GiB of it
archive("broadcast_2g30.pt", state(s("w") + tensor(st=storage(numel=1), size=(2**15, 2**15), stride=(0, 0))),
        {"0": data0[:4]})
# an int64 tensor "a.b" (a dict a holding b) beside a float32 tensor "a.b": a --dtype glob that
# adopts the integer one would make two tensors of one name
archive("int_beside.pt", state(s("a.b"), tensor(), s("a"),
                               b"}" + s("b") + tensor(st=storage(key="1", cls="LongStorage", numel=6)) + b"s"),
        {"0": data0, "1": struct.pack("<6q", 1, 2, 3, 4, 5, 6)})
# one 6-value tensor listed 200,000 times (w.0, w.1.0, ...): 1.2 million values and a list of
# 200,000 tensors from a small file
archive("listed_many.pt", b"\x80\x02}" + s("w") + b"]" + tensor() + b"q\x00a" + b"h\x00\x85a" * 200000 + b"s.",
        {"0": data0}, comp=zipfile.ZIP_DEFLATED)


def longer(name, crc_of_declared):
    """storage 0 declared as 24 bytes (the 6 floats) whose deflate stream gives 48: the sizes in
    both headers say 24; the CRC is that of the 24 declared bytes or of all 48"""
    archive(name, state(s("w"), tensor()), {"0": data0 + data1}, comp=zipfile.ZIP_DEFLATED)
    path = os.path.join(out, name)
    b = bytearray(open(path, "rb").read())
    import zlib
    crc = zlib.crc32(data0 if crc_of_declared else data0 + data1)
    member = b"archive/data/0"
    # (signature, offset of the name length, of the name, of the CRC, of the uncompressed size)
    for sig, nlen, name, crc_at, size_at in ((b"PK\x03\x04", 26, 30, 14, 22), (b"PK\x01\x02", 28, 46, 16, 24)):
        at = b.find(sig)
        while at >= 0:
            nl = struct.unpack_from("<H", b, at + nlen)[0]
            if bytes(b[at + name:at + name + nl]) == member:
                struct.pack_into("<I", b, at + crc_at, crc)
                struct.pack_into("<I", b, at + size_at, 24)
            at = b.find(sig, at + 4)
    open(path, "wb").write(bytes(b))


longer("longer_crc24.pt", True)
longer("longer_crc48.pt", False)
