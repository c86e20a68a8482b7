"""Hand-assembled pickles and torch.save-like zip archives for the PyTorch
reader's test files (standard library only). Used by make_hostile.py and
attack/make_attack.py."""
import os
import struct
import zipfile


class Zip(zipfile.ZipFile):
    """members with a fixed date, so that the files do not change when remade"""

    def writestr(self, name, data, *args):
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.compress_type = self.compression   # a ZipInfo alone would be stored
        super().writestr(info, data, *args)


def archive(out, name, pkl, storages=None, top="archive", extra=None, comp=zipfile.ZIP_STORED):
    """out/name laid out as torch.save writes it: <top>/data.pkl, <top>/data/<key>, <top>/version"""
    with Zip(os.path.join(out, name), "w", comp) as z:
        z.writestr(f"{top}/data.pkl", pkl)
        for key, data in (storages or {}).items():
            z.writestr(f"{top}/data/{key}", data)
        z.writestr(f"{top}/version", "3\n")
        for k, v in (extra or {}).items():
            z.writestr(f"{top}/{k}", v)


def s(x):
    b = x.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def i(n):
    if -2**31 <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    return b"\x8a\x08" + struct.pack("<q", n)


def glob(mod, name):
    return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"


def storage(key="0", cls="FloatStorage", numel=6):
    return b"(" + s("storage") + glob("torch", cls) + s(key) + s("cpu") + i(numel) + b"tQ"


def tup(*items):
    return b"(" + b"".join(items) + b"t"


def tensor(st=None, offset=0, size=(2, 3), stride=(3, 1)):
    st = storage() if st is None else st
    return (glob("torch._utils", "_rebuild_tensor_v2") + b"(" + st + i(offset) + tup(*map(i, size)) +
            tup(*map(i, stride)) + b"\x89" + glob("collections", "OrderedDict") + b")R" + b"tR")


def state(*items):
    return b"\x80\x02}(" + b"".join(items) + b"u."
