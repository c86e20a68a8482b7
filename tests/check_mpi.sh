#!/bin/sh
# mpirun -np 1|2|3 mpanalyze FILES: the range report (JSON and text) is byte
# for byte the single-process one, with the parts of long tensors shared out
# too (MPE_RANGE_CHUNK), and so is refine --cond-sweep; bad input: exit 2, one
# message, no report.
# The ring all-reduce over real MPI messages (examples/allreduce_mpi) gives the
# bits of the emulation (mpe_allreduce_f32, ring order) on 1, 2 and 3 ranks, in
# fp32, fp16, bf16 (toward zero), e4m3 with a scale, and bf16 with stochastic
# rounding; compared with the tree order's emulation instead, it differs.
set -u
prog=${ALLREDUCE_MPI:-./examples/allreduce_mpi}
run="${MPIRUN:-mpirun} --oversubscribe"
[ "$(id -u)" = 0 ] && run="$run --allow-run-as-root"
# no network probing in a sandbox: shared memory and self only
export OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false
# under --enable-sanitizers: Open MPI keeps allocations to exit in components it
# has unloaded by then (no symbols to suppress them by); leak checking of our
# code is done by the single-process suites (check_dist, check_mpanalyze.sh),
# AddressSanitizer's other checks stay on here
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"   # last wins: CI sets detect_leaks=1
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
check() {   # np, then the program's options
  np=$1; shift
  out=$($run -np "$np" "$prog" --n 3001 "$@" 2>&1)
  rc=$?
  case $out in
    *'"bits_differ_from_emulation": 0, "ranks_disagreeing": 0'*) [ $rc -eq 0 ] && ok "np $np $*: $out" || bad "np $np $*: rc $rc: $out" ;;
    *) bad "np $np $*: rc $rc: $out" ;;
  esac
}
check 1 --format bf16
check 2 --format fp16 --sigma 1
check 2 --format e4m3 --scale 1024
check 3 --format fp32
check 3 --format bf16 --round rz
check 3 --format e4m3 --scale 1024
check 3 --format bf16 --round sr --seed 7
# the control: the real ring against the tree's order must not match (3 ranks, bf16)
out=$($run -np 3 "$prog" --n 3001 --format bf16 --compare tree 2>&1)
rc=$?
case $out in
  *'"bits_differ_from_emulation": 0,'*) bad "control: ring matched the tree order: $out" ;;
  *'"bits_differ_from_emulation": '[1-9]*) [ $rc -eq 1 ] && ok "control: ring vs tree order differ: $out" || bad "control rc $rc" ;;
  *) bad "control: $out" ;;
esac

# the range report shared out among ranks
bin=${MPANALYZE:-./mpanalyze}
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
d=$top/tests/data
tmp=$(mktemp -d /tmp/mpe_check_mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
files="$d/grads.npz $d/boundary.npy $d/half.npy $d/model.safetensors $d/stored.npz"
if [ -x ./examples/amp_dump ]; then
  ./examples/amp_dump "$tmp/demo" 2 >/dev/null 2>&1 && files="$files $(ls "$tmp"/demo/grad_step*.npy "$tmp"/demo/dumps/*)"
fi
for fmt in fp16,bf16,e4m3,e5m2 tf32,q16.12,fx16; do
  nps="1 2 3"
  [ $fmt = fp16,bf16,e4m3,e5m2 ] || nps=2
  # shellcheck disable=SC2086
  "$bin" -q --json --format $fmt $files >"$tmp/one.json" || bad "mpanalyze --format $fmt alone"
  # shellcheck disable=SC2086
  "$bin" -q --format $fmt $files >"$tmp/one.txt" || bad "mpanalyze text alone"
  for np in $nps; do
    # shellcheck disable=SC2086
    $run -np $np "$bin" -q --json --format $fmt $files >"$tmp/n.json" 2>"$tmp/err" || bad "np $np: exit $?"
    cmp -s "$tmp/one.json" "$tmp/n.json" && ok "np $np --format $fmt: JSON byte-identical ($(grep -c '"name"' "$tmp/n.json") tensors)" ||
      bad "np $np --format $fmt: JSON differs"
  done
  # shellcheck disable=SC2086
  $run -np 3 "$bin" -q --format $fmt $files >"$tmp/n.txt" 2>"$tmp/err"
  cmp -s "$tmp/one.txt" "$tmp/n.txt" && ok "np 3 --format $fmt: text byte-identical" || bad "np 3 text differs"
done
# every tensor's own report (one file of many tensors, --per-layer): rank 0 writes them to
# its scratch file in file order as the others' results arrive
"$bin" -q "$d/model.safetensors" >"$tmp/one.txt" && "$bin" -q --json --per-layer $files >"$tmp/one.json" ||
  bad "per-tensor reports alone"
$run -np 3 "$bin" -q "$d/model.safetensors" >"$tmp/n.txt" 2>"$tmp/err"
cmp -s "$tmp/one.txt" "$tmp/n.txt" && ok "np 3, one file of $(grep -c '^/' "$tmp/n.txt") tensors: text byte-identical" ||
  bad "np 3 one file: text differs"
# shellcheck disable=SC2086
$run -np 2 "$bin" -q --json --per-layer $files >"$tmp/n.json" 2>"$tmp/err"
cmp -s "$tmp/one.json" "$tmp/n.json" && ok "np 2 --per-layer: JSON byte-identical" || bad "np 2 --per-layer: JSON differs"
# the parts of a long tensor shared out too: with MPE_RANGE_CHUNK=20000, a
# (7, 10001) binary32 tensor is 4 parts (fx16: 7 parts of one 10001-value block),
# and an archive mixes it with short tensors and a binary64 one of 2 parts
if command -v python3 >/dev/null 2>&1 && python3 - "$tmp" <<'PY'
import random, struct, sys, zipfile
d = sys.argv[1]
r = random.Random(18)
def npy(shape, code):
    n = 1
    for s in shape:
        n *= s
    h = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        'f4' if code == 'f' else 'f8', ', '.join(map(str, shape)) + (',' if len(shape) == 1 else ''))
    h += ' ' * ((64 - (11 + len(h)) % 64) % 64) + '\n'
    v = [r.gauss(0, 1) * 2.0 ** r.randint(-40, 12) for _ in range(n)]
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<%d%s' % (n, code), *v)
long = npy((7, 10001), 'f')
open(d + '/long.npy', 'wb').write(long)
with zipfile.ZipFile(d + '/mix.npz', 'w') as z:
    z.writestr('a.npy', npy((100,), 'f'), zipfile.ZIP_STORED)
    z.writestr('long.npy', long, zipfile.ZIP_DEFLATED)
    z.writestr('b.npy', npy((30000,), 'd'), zipfile.ZIP_DEFLATED)
    z.writestr('c.npy', npy((5,), 'f'), zipfile.ZIP_STORED)
PY
then
  export MPE_RANGE_CHUNK=20000
  for args in "--json --format fp16,bf16,fx16,q16.12 $tmp/long.npy" \
              "--json --per-layer --format e4m3,fx16 $tmp/long.npy $tmp/mix.npz $d/half.npy" \
              "--format fp16,fx16 $tmp/mix.npz"; do
    # shellcheck disable=SC2086
    "$bin" -q $args >"$tmp/one" || bad "alone: $args"
    for np in 1 2 3; do
      # shellcheck disable=SC2086
      $run -np $np "$bin" -q $args >"$tmp/n" 2>"$tmp/err"
      cmp -s "$tmp/one" "$tmp/n" && ok "np $np, parts of long tensors ($args): byte-identical" ||
        bad "np $np, parts of long tensors ($args): differs"
    done
  done
  # the control: the parts are merged, not read as one tensor: a rel_error (a
  # quotient of sums of squares, whose last bits follow the order of additions)
  # differs in its last bits from the whole tensor's; nothing else moves
  "$bin" -q --json --format fp16,bf16,fx16 "$tmp/long.npy" >"$tmp/parts.json"
  MPE_RANGE_CHUNK= "$bin" -q --json --format fp16,bf16,fx16 "$tmp/long.npy" >"$tmp/whole.json"
  python3 -c "import json,sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rel = []
for x in (a, b):
    rel.append([f.pop('rel_error') for t in x['tensors'] + [x['total']] for f in t['formats'].values()])
close = all(abs(p - q) <= 1e-12 * p for p, q in zip(*rel))
sys.exit(0 if rel[0] != rel[1] and close and a == b else 1)" "$tmp/parts.json" "$tmp/whole.json" &&
    ok "control: the parts merged give other last bits of rel_error than the whole tensor, and nothing else" ||
    bad "control: parts vs whole tensor"
  MPE_RANGE_CHUNK=1000 "$bin" -q "$tmp/long.npy" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc = 2 ] && grep -q "MPE_RANGE_CHUNK='1000': expected a number of values from 1024" "$tmp/e" && [ ! -s "$tmp/o" ] &&
    ok "MPE_RANGE_CHUNK=1000: exit 2, $(cat "$tmp/e")" || bad "MPE_RANGE_CHUNK=1000: rc $rc"
  unset MPE_RANGE_CHUNK
else
  echo "note: python3 not found; the cases of long tensors in parts are skipped"
fi
# bad input: exit 2, one line from mpanalyze, nothing on stdout
$run -np 3 "$bin" --json $files "$d/hostile/truncated.npy" >"$tmp/o" 2>"$tmp/e"
rc=$?
n=$(grep -c '^mpanalyze: ' "$tmp/e")
[ $rc -ne 0 ] && [ "$n" = 1 ] && [ ! -s "$tmp/o" ] && ok "np 3, a bad file: exit $rc, one message, no report" ||
  bad "np 3 bad file: rc $rc, $n messages"
# refine --cond-sweep: points shared out, the same table
sweep="refine --matrix randsvd --cond-sweep 1e1:1e8:7 --n 48 --json"
# shellcheck disable=SC2086
"$bin" $sweep >"$tmp/s1.json" 2>/dev/null || bad "refine sweep alone"
for np in 2 3; do
  # shellcheck disable=SC2086
  $run -np $np "$bin" $sweep >"$tmp/s.json" 2>"$tmp/err"
  cmp -s "$tmp/s1.json" "$tmp/s.json" && ok "np $np refine --cond-sweep: JSON byte-identical" || bad "np $np refine sweep differs"
done
# scale: the steps shared out; with a scaler that backs off, grows and skips,
# and with FP8 delayed scaling, the same table
if [ -x ./examples/amp_dump ] && ./examples/amp_dump "$tmp/steps" 9 >/dev/null 2>&1; then
  for sc in "--preset pytorch --format fp16 --init 67108864 --interval 3" "--preset delayed --format e4m3 --history 4"; do
    # shellcheck disable=SC2086
    "$bin" scale -q --json $sc "$tmp"/steps/grad_step*.npy >"$tmp/c1.json" 2>/dev/null || bad "scale $sc alone"
    # shellcheck disable=SC2086
    "$bin" scale -q $sc "$tmp"/steps/grad_step*.npy >"$tmp/c1.txt" 2>/dev/null
    for np in 2 3; do
      # shellcheck disable=SC2086
      $run -np $np "$bin" scale -q --json $sc "$tmp"/steps/grad_step*.npy >"$tmp/c.json" 2>"$tmp/err"
      cmp -s "$tmp/c1.json" "$tmp/c.json" &&
        ok "np $np scale $sc: JSON byte-identical ($(grep -c '"skipped": true' "$tmp/c.json") steps skipped)" ||
        bad "np $np scale $sc: JSON differs"
    done
    # shellcheck disable=SC2086
    $run -np 3 "$bin" scale -q $sc "$tmp"/steps/grad_step*.npy >"$tmp/c.txt" 2>"$tmp/err"
    cmp -s "$tmp/c1.txt" "$tmp/c.txt" && ok "np 3 scale: text byte-identical" || bad "np 3 scale text differs"
  done
  $run -np 3 "$bin" scale -q --preset pytorch "$tmp"/steps/grad_step0.npy "$d/hostile/truncated.npy" \
    "$tmp"/steps/grad_step1.npy >"$tmp/o" 2>"$tmp/e"
  rc=$?
  n=$(grep -c '^mpanalyze' "$tmp/e")
  [ $rc -eq 2 ] && [ "$n" = 1 ] && [ ! -s "$tmp/o" ] && ok "np 3 scale, a bad step file: exit 2, one message, no table" ||
    bad "np 3 scale bad file: rc $rc, $n messages"
fi
# other commands run once, on rank 0
$run -np 2 "$bin" memory --params 1e9 >"$tmp/o" 2>&1
[ "$(grep -c '^total' "$tmp/o")" = 1 ] && ok "np 2 memory: printed once" || bad "np 2 memory"
exit $fail
