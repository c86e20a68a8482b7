#!/usr/bin/env python3
"""Regenerate tests/conformance/ from the full conformance data.

    tests/conformance/select.py SOURCE   (the full set: SOURCE/tensor-cores/,
                                          SOURCE/testfloat/; see README.md)

Deterministic: the same source gives byte-identical files (gzip -9, no name,
mtime 0). The rule is written in README.md, "The TestFloat selection":

- tensor-cores/: every file, compressed; LICENCE copied unchanged.
- testfloat/: the files are what testfloat_gen wrote, and the way it interleaves
  its cases (TestFloat 3e, genCases_<type>.c) tells, by position, which lines
  have every operand from its deterministic boundary sequences (exponents at and
  around emin, emax, the subnormal edge, 0, inf/NaN; significands 0, 1, all
  ones, ...) and which have an operand from its weighted random generator:
  * f16_add, f16_sub, f16_mul, f16_div, f16_sqrt: complete level-1 runs, kept
    whole.
  * f32_to_f16, f32_to_bf16, f64_to_f16: a complete level-2 run (the first
    2*|QOutP2| lines: 8,800 for binary32 input, 26,112 for binary64), kept
    whole; then 200,000 cases of `-n 200000` at level 1 (line i of that part
    has a boundary input iff i % 3 == 2, cycling through the same few hundred
    values): a line whose input appeared earlier in the file is dropped, the
    new boundary lines are kept, and every KEEP_EVERY-th of the random ones.
  * f16_mulAdd (the source keeps every 20th level-1 case, so line j is case
    20*j, all three operands boundary values iff (20*j) % 9 == 8): the boundary
    lines and every KEEP_EVERY-th of the others.
  "Every KEEP_EVERY-th" counts those lines in file order from the first.
  The script checks the positions against the data before it writes anything.

Also writes MANIFEST.txt: each file, its lines, the source's lines and the
source file's SHA-256.
"""
import gzip
import hashlib
import os
import shutil
import sys

KEEP_EVERY = 4

# f16 boundary inputs of TestFloat level 1: f16QIn x f16P1 (88 values), f16QOut x f16P1 (136)
F16_QIN = [0x0000, 0x0400, 0x1000, 0x3400, 0x3800, 0x3C00, 0x4000, 0x4400, 0x6800, 0x7800, 0x7C00,
           0x8000, 0x8400, 0x9000, 0xB400, 0xB800, 0xBC00, 0xC000, 0xC400, 0xE800, 0xF800, 0xFC00]
F16_QOUT = [0x0000, 0x0400, 0x0800, 0x1000, 0x2C00, 0x3000, 0x3400, 0x3800, 0x3C00, 0x4000, 0x4400,
            0x4800, 0x4C00, 0x6800, 0x7400, 0x7800, 0x7C00]
F16_QOUT += [e | 0x8000 for e in F16_QOUT]
F16_P1 = [0x0000, 0x0001, 0x03FF, 0x03FE]
F16_BOUNDARY = {e | s for e in F16_QIN for s in F16_P1}      # operands of binary operations
F16_BOUNDARY_1 = {e | s for e in F16_QOUT for s in F16_P1}   # the operand of unary ones

here = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) != 2:
    sys.exit("usage: tests/conformance/select.py SOURCE   (the folder of the full set, see README.md)")
src = os.path.abspath(sys.argv[1])


def die(msg):
    sys.exit("select.py: " + msg)


def write_gz(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0))
    os.replace(tmp, path)


def read_source(path):
    with open(path, "rb") as f:
        raw = f.read()
    sha = hashlib.sha256(raw).hexdigest()
    text = gzip.decompress(raw) if path.endswith(".gz") else raw
    return text, sha


def check_f16_boundary(name, lines, flags, arity):
    allowed = F16_BOUNDARY_1 if arity == 1 else F16_BOUNDARY
    for i, (line, b) in enumerate(zip(lines, flags)):
        if b and not all(int(w, 16) in allowed for w in line.split()[:arity]):
            die("%s line %d: expected TestFloat boundary operands, got %r" % (name, i + 1, line.strip()))


def select_muladd(name, lines):
    flags = [(20 * j) % 9 == 8 for j in range(len(lines))]
    check_f16_boundary(name, lines, flags, 3)
    keep, other = [], 0
    for line, b in zip(lines, flags):
        if b or other % KEEP_EVERY == 0:
            keep.append(line)
        other += not b
    return keep


def select_conversion(name, lines):
    inputs = [l.split()[0] for l in lines]
    zero = "0" * len(inputs[0])
    # the level-1 part starts two lines before the second all-zero input
    ext = [i for i, x in enumerate(inputs) if x == zero]
    if len(ext) < 2 or ext[0] != 1:
        die("%s: no level-2 run followed by a level-1 run" % name)
    start = ext[1] - 2
    want = {"f32": 8800, "f64": 26112}[name[:3]]
    if start != want:
        die("%s: the level-2 run has %d lines, not %d" % (name, start, want))
    cyc = {x for i, x in enumerate(inputs[start:]) if i % 3 == 2}
    if len(cyc) > 400:
        die("%s: %d distinct boundary inputs in the level-1 part: not TestFloat's cycle" % (name, len(cyc)))
    keep, seen, other = lines[:start], set(inputs[:start]), 0
    for i, line in enumerate(lines[start:]):
        x = inputs[start + i]
        if x in seen:
            continue
        seen.add(x)
        if (i % 3) == 2:
            keep.append(line)
        else:
            if other % KEEP_EVERY == 0:
                keep.append(line)
            other += 1
    return keep


def main():
    tc_src, tf_src = os.path.join(src, "tensor-cores"), os.path.join(src, "testfloat")
    if not os.path.isdir(tc_src) or not os.path.isdir(tf_src):
        die("no tensor-cores/ and testfloat/ under %s" % src)
    manifest = []
    # tensor cores: everything
    for root, _, files in sorted(os.walk(tc_src)):
        for name in sorted(files):
            sp = os.path.join(root, name)
            rel = os.path.relpath(sp, src)
            if name == "LICENCE":
                os.makedirs(os.path.join(here, os.path.dirname(rel)), exist_ok=True)
                shutil.copyfile(sp, os.path.join(here, rel))
                continue
            text, sha = read_source(sp)
            nl = text.count(b"\n")
            write_gz(os.path.join(here, rel + ".gz"), text)
            manifest.append((rel + ".gz", nl, nl, sha))
    # TestFloat: the selection
    for name in sorted(os.listdir(tf_src)):
        if not name.endswith(".txt.gz"):
            continue
        text, sha = read_source(os.path.join(tf_src, name))
        lines = text.decode("ascii").splitlines(keepends=True)
        if name.startswith("f16_mulAdd"):
            keep = select_muladd(name, lines)
        elif name.startswith(("f32_to", "f64_to")):
            keep = select_conversion(name, lines)
        else:
            op = name.split("_")[1]
            arity = 1 if op == "sqrt" else 2
            check_f16_boundary(name, lines, [i % (3 * arity) == 3 * arity - 1 for i in range(len(lines))], arity)
            keep = lines
        rel = os.path.join("testfloat", name)
        write_gz(os.path.join(here, rel), "".join(keep).encode("ascii"))
        manifest.append((rel, len(keep), len(lines), sha))
    with open(os.path.join(here, "MANIFEST.txt"), "w") as f:
        f.write("# file  lines  source-lines  source-sha256 (regenerate with select.py)\n")
        for rel, n, ns, sha in manifest:
            f.write("%s %d %d %s\n" % (rel, n, ns, sha))
    print("select.py: %d files from %s" % (len(manifest), src))


main()
