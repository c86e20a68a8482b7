#!/bin/sh
# mpanalyze memory and order from the outside: the talk's 16 GB and the ZeRO
# paper's 7.5 B / 64 GPU table in text and JSON, a reduction-order study of a
# small text dump, and the one-line errors for bad options.
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${MPANALYZE:-./mpanalyze}
tmp=$(mktemp -d /tmp/mpe_check_dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
jget() {
  python3 -c "import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    v = v[int(k)] if k.isdigit() else v[k]
print(v if not isinstance(v, float) else repr(v))" "$1" "$2"
}

# the talk: 1 B parameters, AMP, Adam: 16 GB
"$bin" memory --params 1e9 --precision amp-fp16 --optimizer adam >"$tmp/t.txt" 2>&1 || bad "memory 1e9 exit"
grep -Eq '^total +16 +16\.0000' "$tmp/t.txt" && ok "memory: 1 B AMP Adam = 16 GB" || { bad "memory 16 GB"; cat "$tmp/t.txt"; }
# ZeRO Table 1: 7.5 B, 64 GPUs
i=0
for want in 120000000000.0 31406250000.0 16640625000.0 1875000000.0; do
  "$bin" memory --params 7.5B --zero $i --gpus 64 --json >"$tmp/z$i.json" || bad "memory --zero $i exit"
  got=$(jget "$tmp/z$i.json" bytes_per_gpu.total)
  [ "$got" = "$want" ] && ok "memory: ZeRO stage $i, 7.5 B / 64 GPUs = $got bytes" || bad "memory stage $i: $got, want $want"
  i=$((i + 1))
done
"$bin" memory -p 7.5e9 -z 1 -g 64 | grep -Eq '^total +16 +31\.4062' && ok "memory: text stage 1 31.4 GB" || bad "memory text stage 1"
"$bin" memory -p 1.3e9 -a seq=2,batch=1,hidden=4,layers=1,heads=2 --json >"$tmp/a.json" || bad "memory activations exit"
[ "$(jget "$tmp/a.json" bytes_per_gpu.activations)" = "312.0" ] && ok "memory: activations formula" || bad "memory activations"
for args in "--params 0" "--params x" "--zero 4 --params 1e9" "--gpus 0 --params 1e9" "--optimizer lamb --params 1e9" \
            "--precision fp4 --params 1e9" "--activations -3GB --params 1e9" "--activations seq=1,x=2 --params 1e9" ""; do
  # shellcheck disable=SC2086
  "$bin" memory $args >"$tmp/o" 2>"$tmp/e"
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" -eq 1 ]; then ok "memory $args: refused"; else bad "memory $args: rc $rc"; fi
done

# order: (2^24, 1, 1) summed in binary32; rows of 3
printf '16777216\n1\n1\n16777216\n1\n1\n' >"$tmp/o.txt"
"$bin" order --len 3 --trials 300 --splits 2 --json "$tmp/o.txt" >"$tmp/o.json" || bad "order exit"
[ "$(jget "$tmp/o.json" rows)" = 2 ] && [ "$(jget "$tmp/o.json" max_spread_ulps)" = "1.0" ] &&
  [ "$(jget "$tmp/o.json" splitk_differ)" = 2 ] && ok "order: spread 1 ulp, split-K differs" || { bad "order json"; cat "$tmp/o.json"; }
d=$(jget "$tmp/o.json" differ)
[ "$d" -gt 120 ] && [ "$d" -lt 280 ] && ok "order: $d of 600 random orders differ (1/3 expected)" || bad "order differ $d"
"$bin" order --len 3 --trials 300 --splits 2 --json "$tmp/o.txt" | cmp -s - "$tmp/o.json" && ok "order: reproducible" || bad "order reproducible"
"$bin" order --len 3 "$tmp/o.txt" | grep -q 'random orders differing' && ok "order: text" || bad "order text"
# --seed is decimal (010 is ten, not octal eight) or 0x hexadecimal
for p in "010 10" "0x10 16"; do
  set -- $p
  "$bin" order --len 3 --trials 300 --json --seed "$1" "$tmp/o.txt" >"$tmp/s1.json" 2>&1
  "$bin" order --len 3 --trials 300 --json --seed "$2" "$tmp/o.txt" >"$tmp/s2.json" 2>&1
  cmp -s "$tmp/s1.json" "$tmp/s2.json" && [ "$(jget "$tmp/s1.json" seed)" = "$2" ] && ok "order: --seed $1 is $2" || bad "order --seed $1: $(head -c 200 "$tmp/s1.json")"
done
"$bin" order --len 4 "$tmp/o.txt" >"$tmp/o2" 2>"$tmp/e"; [ $? -eq 2 ] && [ ! -s "$tmp/o2" ] && ok "order: bad --len refused" || bad "order bad len"
"$bin" order --format fp64 "$tmp/o.txt" >"$tmp/o2" 2>"$tmp/e"; [ $? -eq 2 ] && ok "order: fp64 refused" || bad "order fp64"
"$bin" order "$tmp/missing.npy" >"$tmp/o2" 2>"$tmp/e"; [ $? -eq 2 ] && ok "order: missing file refused" || bad "order missing"
printf '1\nnan\n' >"$tmp/nan.txt"
"$bin" order "$tmp/nan.txt" >"$tmp/o2" 2>"$tmp/e"; [ $? -eq 2 ] && [ ! -s "$tmp/o2" ] && ok "order: NaN refused" || bad "order NaN"
# ddp_lab: an FP16 all-reduce without loss scaling zeroes gradients that the scaled one keeps
lab=$(dirname "$bin")/examples/ddp_lab
if [ -x "$lab" ]; then
  "$lab" --steps 3 --n 16 --din 128 --dout 64 --workers 4 --every 0 --formats fp32,fp16 >"$tmp/ddp" 2>"$tmp/e" ||
    bad "ddp_lab exit"
  z() { awk -v f="$1" -v s="$2" '$1 == f && $2 == s { sub("%", "", $7); print $7 }' "$tmp/ddp"; }
  [ "$(grep -c '^fp' "$tmp/ddp")" = 4 ] && ok "ddp_lab: 4 runs" || { bad "ddp_lab rows"; cat "$tmp/ddp"; }
  awk -v a="$(z fp16 none)" -v b="$(z fp16 dynamic)" -v c="$(z fp32 none)" 'BEGIN { exit !(a > b && c == 0) }' &&
    ok "ddp_lab: fp16 unscaled zeroes $(z fp16 none)% of the gradients, scaled $(z fp16 dynamic)%, fp32 0" ||
    { bad "ddp_lab zeroed"; cat "$tmp/ddp"; }
  "$lab" --workers 3 >"$tmp/o2" 2>"$tmp/e"; [ $? -eq 2 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
    ok "ddp_lab: --workers not dividing --n refused" || bad "ddp_lab bad workers"
fi
exit $fail
