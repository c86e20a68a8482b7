#!/bin/sh
# Every mpanalyze command printed in README.md (its ```sh blocks) and in the
# EXAMPLES of mpanalyze(1) runs and exits 0, on small files made here with the
# names the documents use (grads.safetensors, dump.npz with fc.weight, step*.npy…).
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${MPANALYZE:-$(pwd)/mpanalyze}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to write the fixtures"; exit 77; }
tmp=$(mktemp -d /tmp/mpe_doc_cmds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'leak:libfontconfig\nleak:libcairo\nleak:libpango\nleak:libglib\nleak:libgobject\nleak:libltdl\nleak:libplplot\nleak:libfreetype\nleak:libpixman\n' >"$tmp/lsan.supp"
export LSAN_OPTIONS="suppressions=$tmp/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# fixtures, standard library only: gradient-like values N(0, 1e-3) with a few outliers
python3 - "$tmp" <<'PY' || exit 1
import json, random, struct, sys, zipfile, os
d = sys.argv[1]; rnd = random.Random(7)
def vals(n, s=1e-3):
    v = [rnd.gauss(0, s) for _ in range(n)]
    v[0], v[1] = 7e4, 3e-9
    return v
def npy(dtype, shape, raw):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, ''.join('%d,' % s for s in shape))
    h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + raw
def f32(v): return struct.pack('<%df' % len(v), *v)
def st(tensors):
    hdr, off, blob = {}, 0, b''
    for name, v in tensors:
        b = f32(v); hdr[name] = {'dtype': 'F32', 'shape': [len(v)], 'data_offsets': [off, off + len(b)]}
        off += len(b); blob += b
    h = json.dumps(hdr).encode(); h += b' ' * ((8 - len(h) % 8) % 8)
    return struct.pack('<Q', len(h)) + h + blob
def put(name, data):
    with open(os.path.join(d, name), 'wb') as f: f.write(data)
put('grads.safetensors', st([('fc.weight', vals(4096)), ('fc.bias', vals(64))]))
put('grads.npy', npy('<f4', [4096], f32(vals(4096))))
with zipfile.ZipFile(os.path.join(d, 'dump.npz'), 'w') as z:
    z.writestr('fc.weight.npy', npy('<f4', [64, 64], f32(vals(4096))))
    z.writestr('fc.bias.npy', npy('<f4', [64], f32(vals(64))))
bf = [struct.unpack('<I', struct.pack('<f', x))[0] >> 16 for x in vals(2048, 1.0)]
put('act.npy', npy('<u2', [2048], struct.pack('<%dH' % len(bf), *bf)))
put('raw.bin', f32(vals(512 * 1024)))
for s in range(4):
    put('step%d.npy' % s, npy('<f4', [2048], f32(vals(2048, 10.0 ** -(s + 2)))))
    put('step%d.safetensors' % s, st([('g', vals(2048, 10.0 ** -(s + 2)))]))
put('w.npy', npy('<f4', [1024], f32([rnd.uniform(-1, 1) for _ in range(1024)])))
# a mixed .npz as ml_dtypes and a training loop write it: untyped bf16 and FP8 members, a step counter
with zipfile.ZipFile(os.path.join(d, 'mixed.npz'), 'w') as z:
    z.writestr('attn.q.npy', npy('|V2', [2048], struct.pack('<%dH' % 2048, *bf)))
    z.writestr('mlp.w.npy', npy('|V1', [256], bytes(rnd.randrange(0, 0x7e) for _ in range(256))))
    z.writestr('step.npy', npy('<i8', [], struct.pack('<q', 7)))
# a run: one safetensors dump per step in a folder (step2 sorts before step10)
os.mkdir(os.path.join(d, 'dumps'))
for s in range(1, 13):
    put('dumps/step%d.safetensors' % s, st([('fc.weight', vals(1024, 10.0 ** -(2 + s / 3))), ('fc.bias', vals(64))]))
put('u.npy', npy('<f4', [1024], f32(vals(1024, 1e-5))))
PY

# commands may name the repository's own test files (tests/data/...)
ln -s "$top/tests" "$tmp/tests"
cp "$top/tests/data/pt/nested.pt" "$tmp/checkpoint.pt"   # a torch.save checkpoint (model + optimizer)

# the commands: README's ```sh blocks, then mpanalyze(1)'s EXAMPLES
awk '/^```sh/{f=1; next} /^```/{f=0} f && /^mpanalyze /' "$top/README.md" | sed 's/[[:space:]]*#.*$//' >"$tmp/cmds"
awk '/^\.SH EXAMPLES/{f=1; next} /^\.SH/{f=0} f && /^mpanalyze /' "$top/man/man1/mpanalyze.1" | sed 's/\\-/-/g' >>"$tmp/cmds"
n=$(wc -l <"$tmp/cmds")
[ "$n" -ge 10 ] || { echo "FAIL: found only $n commands in README.md and mpanalyze(1)"; exit 1; }
fail=0 i=0
while IFS= read -r cmd; do
  i=$((i + 1))
  run=$(printf '%s' "$cmd" | sed "s|^mpanalyze|\"$bin\"|")
  if (cd "$tmp" && eval "$run" >"$tmp/out.$i" 2>&1); then
    echo "ok   $cmd"
  else
    echo "FAIL (exit $?) $cmd"; sed 's/^/    /' "$tmp/out.$i" | tail -n 5; fail=1
  fi
done <"$tmp/cmds"
echo "$i documented commands run"
exit $fail
