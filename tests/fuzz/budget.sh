#!/bin/sh
# Every mpanalyze subcommand and every reader on an input made to have it hold far more
# than 64 MiB (tests/fuzz/budget_inputs.py), run under --max-memory 64M: exit status, peak
# RSS (/usr/bin/time), wall and CPU seconds, one row each, as a Markdown table. A row fails when the
# process died (a signal, the time limit) or its peak RSS passed 64 MiB above what the tool
# holds for a one-value file (the libraries, the range targets' tables).
#   tests/fuzz/budget.sh [MPANALYZE [ROW...]]      ROW: a row's number (default: all)
# BUDGET_DIR: where the inputs are made (default a temporary folder, removed after);
# BUDGET_TIMEOUT: seconds a row may take (default 300).
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../mpanalyze}
[ $# -gt 0 ] && shift
rows=" $* "
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time is missing"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }
dir=${BUDGET_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d) || exit 1
  trap 'rm -rf "$dir"' EXIT
fi
tmo=${BUDGET_TIMEOUT:-300}
M="--max-memory 64M"

# the inputs the chosen rows name, made once
cases='
range          | big.npy                 | range -q M I
range          | big_fortran.npy         | range -q M I
range          | big.raw                 | range -q --kind raw --dtype fp32 M I
range          | big.txt                 | range -q M I
range          | bomb.npz                | range -q M I
range --json   | many.npz                | range -q --json M I
range          | big.safetensors         | range -q M I
range          | meta_90m.safetensors    | range -q M I
range          | keys_90m.safetensors    | range -q M I
range --json   | many_empty.safetensors  | range -q --json M I
range          | listed_2m.pt            | range -q M I
range --json   | listed_2m.pt            | range -q --json M I
range          | view_256m.pt            | range -q M I
range          | broadcast_64.pt         | range -q M I
range          | flood.pt                | range -q M I
range          | memo_wide.pt            | range -q M I
range (3 files)| big.npy bomb.npz view_256m.pt | range -q --per-layer M I
scale          | big.npy                 | scale -q --preset pytorch M I
scale          | many_empty.safetensors  | scale -q --preset pytorch M I
scale          | listed_2m.pt            | scale -q --preset pytorch M I
scale          | view_256m.pt            | scale -q --preset pytorch M I
order          | big.npy                 | order -q M I
order          | big.txt                 | order -q M I
order          | bomb.npz                | order -q M I
order          | view_256m.pt            | order -q M I
order          | broadcast_64.pt         | order -q M I
update         | big.npy                 | update -q M -w I -u I
update         | big.safetensors         | update -q M -w I -u I
update         | listed_2m.pt            | update -q M -w I -u I
refine         | dense_20000.mtx         | refine -q M --matrix I
refine         | nnz_6m.mtx              | refine -q M --matrix I
refine         | nnz_declared.mtx        | refine -q M --matrix I
refine         | (randsvd, n 20000)      | refine -q M --matrix randsvd --n 20000
refine         | (--cond-sweep, n 20000) | refine -q M --matrix randsvd --n 20000 --cond-sweep 1:8:2
cg             | nnz_6m.mtx              | cg -q M --matrix I
cg             | nnz_declared.mtx        | cg -q M --matrix I
cg             | (laplace2d, n 4000)     | cg -q M --matrix laplace2d --n 4000
cg --csr       | (laplace3d, n 400)      | cg -q M --csr --matrix laplace3d --n 400
memory         | (--params 1e15)         | memory M --params 1e15
'
need=$(echo "$cases" | awk -F'|' -v rows="$rows" 'NF == 3 { n++; if (rows == "  " || index(rows, " " n " ")) print $2 }' |
       tr ' ' '\n' | grep '\.' | sort -u)
missing=$(for f in $need; do [ -e "$dir/$f" ] || echo "$f"; done)
[ -z "$missing" ] || python3 "$here/budget_inputs.py" "$dir" $missing >/dev/null || { echo "budget_inputs.py failed"; exit 1; }

printf 'one\n' >"$dir/one.txt"
/usr/bin/time -f %M -o "$dir/.base" "$bin" range -q "$dir/one.txt" >/dev/null 2>&1
base=$(tail -n 1 "$dir/.base")
limit=$((base + 65536))
echo "mpanalyze on a one-value file: $base KiB; a row fails past $limit KiB or when the process dies"
echo
echo "| # | path | input | exit | peak RSS (MiB) | wall s | CPU s | verdict | message |"
echo "|---|---|---|---|---|---|---|---|---|"
n=0 fails=0
echo "$cases" | { while IFS='|' read -r path input cmd; do
  [ -n "$cmd" ] || continue
  n=$((n + 1))
  case "$rows" in "  ") ;; *" $n "*) ;; *) continue;; esac
  path=$(echo $path) input=$(echo $input)
  set --
  for w in $cmd; do
    case $w in
      M) set -- "$@" $M;;
      I) for f in $input; do set -- "$@" "$dir/$f"; done;;
      *) set -- "$@" "$w";;
    esac
  done
  /usr/bin/time -f "%M %e %U %S" -o "$dir/.time" timeout -s KILL "$tmo" "$bin" "$@" >"$dir/.out" 2>"$dir/.err"
  st=$?
  read -r pk secs us ss <<EOF
$(tail -n 1 "$dir/.time")
EOF
  case $pk in ''|*[!0-9]*) pk=0;; esac
  v=ok
  [ $st -gt 3 ] && v="FAIL (status $st)"
  [ "$pk" -gt $limit ] && v="FAIL (RSS)"
  [ "$v" = ok ] || fails=$((fails + 1))
  msg=$(head -n 1 "$dir/.err" | cut -c1-110 | sed "s|$dir/||g; s/|/\\\\|/g")
  [ -n "$msg" ] || msg="(report: $(wc -c <"$dir/.out") bytes)"
  printf '| %d | %s | %s | %d | %.1f | %s | %.2f | %s | %s |\n' $n "$path" "$input" $st "$(echo "$pk / 1024" | bc -l)" "$secs" \
    "$(echo "${us:-0} + ${ss:-0}" | bc -l)" "$v" "$msg"
done
echo
echo "$fails row(s) failed"
[ $fails -eq 0 ]; }
