#!/usr/bin/env python3
"""Make the hostile PyTorch-like files tests/data/hostile/pt_*.pt (standard library only).

Each is a zip laid out as torch.save writes it (<top>/data.pkl, <top>/data/<key>,
<top>/version) whose pickle is wrong in one way. Some would run a command if
loaded with Python's pickle.load or an old torch.load: the reader must refuse
them without running anything. Those pickles are made by Python's pickle module
itself; the others are assembled opcode by opcode.
    python3 tests/data/pt/make_hostile.py tests/data/hostile
"""
import os
import pickle
import struct
import sys
import zipfile

out = sys.argv[1] if len(sys.argv) > 1 else "."
MARKER = "mpemu-pwned-marker"   # what the commands below would create


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pickle_asm  # noqa: E402
from pickle_asm import Zip, glob, i, s, state, storage, tensor, tup  # noqa: E402,F401


def archive(name, pkl, storages=None, top="archive", extra=None):
    pickle_asm.archive(out, name, pkl, storages, top, extra)


# --- pickles that would run something, made by pickle itself
class System:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


class Eval:
    def __reduce__(self):
        return (eval, (f"__import__('os').system('touch {MARKER}')",))


archive("pt_os_system.pt", pickle.dumps({"w": System()}, protocol=2))
archive("pt_eval.pt", pickle.dumps([Eval()], protocol=2))
archive("pt_stack_global.pt", pickle.dumps(System(), protocol=4))   # STACK_GLOBAL + FRAME + MEMOIZE


# --- hand-assembled torch-like pickles (helpers in pickle_asm.py)
data0 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
# a correct one, to show the assembler right (used as a fuzz seed, not hostile)
ok = state(s("w"), tensor())
# a call that is not a tensor rebuild: OrderedDict with arguments, a storage class called
archive("pt_call_odict.pt", state(s("w"), glob("collections", "OrderedDict") + tup(i(1)) + b"R"), {"0": data0})
archive("pt_call_storage.pt", state(s("w"), glob("torch", "FloatStorage") + b")R"), {"0": data0})
# views outside their storage: a size too large, an offset too far, a stride too long
archive("pt_oob_size.pt", state(s("w"), tensor(size=(3, 3))), {"0": data0})
archive("pt_oob_offset.pt", state(s("w"), tensor(offset=1)), {"0": data0})
archive("pt_oob_stride.pt", state(s("w"), tensor(size=(2, 3), stride=(1, 4))), {"0": data0})
archive("pt_stride_overflow.pt", state(s("w"), tensor(size=(2, 3), stride=(2**31 - 1, 2**31 - 1))), {"0": data0})
# a storage claiming more elements than its member holds; a storage with no member
archive("pt_storage_size.pt", state(s("w"), tensor(st=storage(numel=7))), {"0": data0})
archive("pt_storage_missing.pt", state(s("w"), tensor(st=storage(key="9"))), {"0": data0})
archive("pt_storage_key.pt", state(s("w"), tensor(st=storage(key="../0"))), {"0": data0})
# absurd nesting: 1000 lists inside each other, the tensor at the bottom
archive("pt_deep.pt", b"\x80\x02" + b"]" * 1000 + tensor() + b"a" * 1000 + b".", {"0": data0})
# an exploding structure: 60 levels of [x, x] over one tensor (2^60 references)
bomb = b"\x80\x02" + tensor() + b"q\x000"
for _ in range(60):
    bomb += b"h\x00h\x00\x86q\x000"
archive("pt_bomb.pt", bomb + b"h\x00.", {"0": data0})
# a list holding itself
archive("pt_cycle.pt", b"\x80\x02]q\x00h\x00a.")
# memo: an index no pickle of this size can have; a get of an unset entry
archive("pt_memo_huge.pt", b"\x80\x02]r\xf0\xff\xff\xff.")
archive("pt_memo_unset.pt", b"\x80\x02" + b"N0" * 8 + b"h\x05.")
# opcodes outside the allow-list: INST (calls a class by name), text PERSID, NEWOBJ
archive("pt_inst.pt", b"\x80\x02(iposix\nsystem\n.")
archive("pt_persid_text.pt", b"\x80\x02P0\n.")
# an empty tuple built with MARK TUPLE before any other tuple: the reader's tuple pool was
# still NULL (UBSan: zero offset applied to a null pointer; found by fuzz_pkl). Zero tensors.
archive("pt_empty_tuple.pt", b"\x80\x02(t.")
archive("pt_newobj.pt", state(s("w"), glob("collections", "OrderedDict") + b")\x81"))
# truncated pickle; a pickle without STOP; a string running past the end
archive("pt_truncated.pt", state(s("w"), tensor())[:-40], {"0": data0})
archive("pt_no_stop.pt", state(s("w"), tensor())[:-1], {"0": data0})
archive("pt_long_string.pt", b"\x80\x02X\xff\xff\xff\x7fabc.")
# a key that is not UTF-8
archive("pt_key_utf8.pt", b"\x80\x02}(X\x02\x00\x00\x00\xff\xfe" + tensor() + b"u.", {"0": data0})
# bad byteorder member
archive("pt_byteorder.pt", ok, {"0": data0}, extra={"byteorder": "middle"})
# the legacy (pre-1.6) format: a bare pickle starting with torch's magic number
with open(os.path.join(out, "pt_legacy.pt"), "wb") as f:
    f.write(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2))
# the same hostile pickle, but bare (no zip): refused as a bare pickle
with open(os.path.join(out, "pt_bare_pickle.pt"), "wb") as f:
    f.write(pickle.dumps({"w": System()}, protocol=2))
# a good big-endian archive (as torch.save writes on a big-endian machine): 1..6 in float32
ptdir = os.path.dirname(os.path.abspath(__file__))
with Zip(os.path.join(ptdir, "big_endian.pt"), "w", zipfile.ZIP_STORED) as z:
    z.writestr("big_endian/data.pkl", state(s("w"), tensor()))
    z.writestr("big_endian/byteorder", "big")
    z.writestr("big_endian/data/0", struct.pack(">6f", 1, 2, 3, 4, 5, 6))
    z.writestr("big_endian/version", "3\n")
# and the good one, for the fuzz corpus
if len(sys.argv) > 2:
    archive(os.path.join(os.path.abspath(sys.argv[2]), "assembled.pt"), ok, {"0": data0})
