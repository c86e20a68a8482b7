#!/bin/sh
# The documents' examples run as written:
# 1. every command in README.md's ```sh blocks and in the EXAMPLES of every manual
#    page (mpanalyze, mpirun, mpe-gpucheck lines) exits 0, run in a folder made as
#    `scripts/mpemu-run demo` makes mpemu-demo/ (examples/amp_dump, checkpoint.pt);
#    globs in them are quoted (a shell would sort step10 before step2);
# 2. every manual page's EXAMPLES that is a whole program (it has a main) compiles
#    against the build tree and exits 0;
# 3. every line of README.md's ```c and ```python snippets is in the example file the
#    text before it names (examples/tour_*.c, examples/tour.py: make check runs those).
# Other ```sh lines (building, installing, linking) are checked by tests/check_layers.sh
# and by CI's own run of scripts/mpemu-run; a line of any other kind fails here.
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=$(pwd)
bin=${MPANALYZE:-$build/mpanalyze}
tmp=$(mktemp -d /tmp/mpe_doc_cmds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'leak:libfontconfig\nleak:libcairo\nleak:libpango\nleak:libglib\nleak:libgobject\nleak:libltdl\nleak:libplplot\nleak:libfreetype\nleak:libpixman\n' >"$tmp/lsan.supp"
export LSAN_OPTIONS="suppressions=$tmp/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fail=0
bad() { echo "FAIL $*"; fail=1; }

# the demo's files, as scripts/mpemu-run demo writes them
demo=$tmp/mpemu-demo
[ -x ./examples/amp_dump ] || { echo "FAIL examples/amp_dump is not built"; exit 1; }
./examples/amp_dump "$demo" 12 >/dev/null || { echo "FAIL examples/amp_dump"; exit 1; }
cp "$top/tests/data/pt/nested.pt" "$demo/checkpoint.pt"
ln -s "$top/tests" "$demo/tests"   # commands may name the repository's test data

# 1. the commands: README's ```sh blocks, then every page's EXAMPLES
awk '/^```sh/{f=1; next} /^```/{f=0} f' "$top/README.md" | sed 's/[[:space:]]*#.*$//; /^[[:space:]]*$/d' >"$tmp/readme"
: >"$tmp/cmds"
while IFS= read -r line; do
  case $line in
    mpanalyze\ *|mpirun\ *) printf '%s\n' "$line" >>"$tmp/cmds" ;;
    "scripts/mpemu-run "*|autoreconf*|./configure*|make*|"cc "*|"export PKG_CONFIG_PATH="*|"export LD_LIBRARY_PATH="*) ;;
    "cd mpemu-demo"|"export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"*) ;;   # done here
    *) bad "README.md: a command this check does not know how to run: $line" ;;
  esac
done <"$tmp/readme"
for page in "$top"/man/man*/*.[1-9]; do
  awk '/^\.SH EXAMPLES/{f=1; next} /^\.SH/{f=0} f' "$page" | sed 's/\\-/-/g; s/\\(aq/'"'"'/g; s/[[:space:]]*#.*$//' |
    grep -E '^(mpanalyze|mpirun|mpe-gpucheck) ' >>"$tmp/cmds"
done
n=$(wc -l <"$tmp/cmds")
[ "$n" -ge 25 ] || bad "found only $n commands in README.md and the manual pages"
mpi=0
for b in "$build/.libs/mpanalyze" "$bin"; do
  [ -f "$b" ] && ldd "$b" 2>/dev/null | grep -q libmpi && mpi=1
done
# Open MPI refuses root unless told twice (what README.md says to do)
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false
i=0 ran=0 skipped=0
while IFS= read -r cmd; do
  i=$((i + 1))
  # a glob outside quotes would be sorted by the shell: step10 before step2
  unquoted=$(printf '%s' "$cmd" | sed "s/'[^']*'//g; s/\"[^\"]*\"//g")
  case $unquoted in *\**|*\?*) bad "unquoted glob: $cmd"; continue ;; esac
  case $cmd in
    mpirun\ *)
      if [ $mpi = 0 ]; then echo "skip (mpanalyze built without MPI) $cmd"; skipped=$((skipped + 1)); continue; fi
      # under --enable-sanitizers: Open MPI keeps allocations to exit (tests/check_mpi.sh says
      # why); leak checking of mpanalyze is done by the single-process commands above and below
      run="ASAN_OPTIONS=\"\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0\" $(printf '%s' "$cmd" | sed "s| mpanalyze | \"$bin\" |")" ;;
    mpe-gpucheck\ *)
      if [ ! -x "$build/gpu/mpe-gpucheck" ]; then echo "skip (gpu/mpe-gpucheck not built) $cmd"; skipped=$((skipped + 1)); continue; fi
      run=$(printf '%s' "$cmd" | sed "s|^mpe-gpucheck|\"$build/gpu/mpe-gpucheck\"|") ;;
    *) run=$(printf '%s' "$cmd" | sed "s|^mpanalyze|\"$bin\"|") ;;
  esac
  (cd "$demo" && eval "$run" </dev/null >"$tmp/out.$i" 2>&1)
  st=$?
  if [ $st = 0 ]; then
    echo "ok   $cmd"; ran=$((ran + 1))
  elif [ $st = 77 ]; then
    echo "skip (exit 77: $(tail -n 1 "$tmp/out.$i")) $cmd"; skipped=$((skipped + 1))
  else
    bad "(exit $st) $cmd"; sed 's/^/    /' "$tmp/out.$i" | tail -n 5
  fi
done <"$tmp/cmds"
echo "$ran of $i documented commands ran and exited 0 ($skipped skipped)"

# 2. whole programs in the manual pages' EXAMPLES
cc=${CC:-cc}
np=0
shared=1
[ -f "$build/.libs/libmpemu.so" ] || { shared=0; echo "SKIP the manual pages' programs (no shared library in this build)"; }
for page in "$top"/man/man3/*.3; do
  [ "$shared" = 1 ] || break
  awk '/^\.SH EXAMPLES/{f=1; next} /^\.SH/{f=0} f' "$page" >"$tmp/ex.roff"
  grep -q 'main *(' "$tmp/ex.roff" || continue
  name=$(basename "$page" .3)
  # roff to C: the .nf ... .fi block, requests dropped, the escapes the pages use undone
  awk '/^\.nf/{f=1; next} /^\.fi/{f=0} f' "$tmp/ex.roff" | grep -v '^\.' |
    sed 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g; s/\\(dq/"/g; s/\\&//g' >"$tmp/$name.c"
  # the arguments the page runs it with (`.BR "./a.out ARGS"`), in the demo's folder
  args=$(sed -n 's/^\.BR* "\.\/a\.out \(.*\)".*$/\1/p' "$tmp/ex.roff" | head -n 1)
  libs="-lmpemu"
  [ -f "$build/.libs/libmpemu-analysis.so" ] && libs="-lmpemu-analysis $libs"
  [ -f "$build/.libs/libmpemu-solvers.so" ] && libs="-lmpemu-solvers $libs"
  # shellcheck disable=SC2086
  if $cc -std=gnu11 -I"$top/lib" -Ilib -o "$tmp/$name" "$tmp/$name.c" -L"$build/.libs" $libs -lm 2>"$tmp/err" &&
     (cd "$demo" && LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/$name" $args) >"$tmp/out" 2>&1; then
    echo "ok   $name(3) EXAMPLES compiled and ran"; np=$((np + 1))
  else
    bad "$name(3) EXAMPLES: $(head -c 800 "$tmp/err") $(tail -n 3 "$tmp/out" 2>/dev/null)"
  fi
done
[ "$shared" = 0 ] || [ "$np" -ge 3 ] || bad "only $np manual pages with a whole program in EXAMPLES"

# 3. README's C and Python snippets are in the files it names
awk -v out="$tmp/snip" '
  /^```(c|python)$/ { k++; f = 1; print (para != "" ? para : last) > (out "." k ".file"); para = last = ""; next }
  /^```/ { f = 0; para = last = ""; next }
  f { print > (out "." k) ; next }
  !NF { if (para != "") last = para; para = ""; next }
  { para = para " " $0 }' "$top/README.md"
ns=0
for s in "$tmp"/snip.*.file; do
  [ -f "$s" ] || continue
  ns=$((ns + 1))
  ex=$(grep -o 'examples/tour[a-z0-9_]*\.\(c\|py\)' "$s" | head -n 1)
  body=${s%.file}
  if [ -z "$ex" ] || [ ! -f "$top/$ex" ]; then
    bad "README.md snippet $ns: the text before it names no examples/tour file ($(cat "$s"))"; continue
  fi
  missing=0
  while IFS= read -r l; do
    t=$(printf '%s' "$l" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
    [ -z "$t" ] && continue
    grep -qF -- "$t" "$top/$ex" || { bad "README.md snippet in $ex: line not in the file: $t"; missing=1; }
  done <"$body"
  [ $missing = 0 ] && echo "ok   README.md snippet $ns is in $ex"
done
[ "$ns" -ge 5 ] || bad "found only $ns C/Python snippets in README.md"
exit $fail
