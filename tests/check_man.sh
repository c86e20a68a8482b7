#!/bin/sh
# Every manual page formats without a warning (groff -t -ww: tbl tables,
# undefined macros such as a line that starts with '.npz', broken .so links),
# mpemu(3)'s INDEX names every page in man3, and a dist_man_MANS line installs every page.
# Every function the libraries export (mpe_*) has a page of its own name (man NAME),
# every page of a function names its link line (pkg-config ... mpemu or mpemu-analysis),
# and mandb indexes them all (man -k mpe_). The documents for users say what is true
# now: no issue numbers, sitting times, dates or was/now history in README.md, the
# manual pages, the installed headers and the --help of mpanalyze and mpe-gpucheck; and no file cites
# anything outside the repository or a section of docs/DESIGN.md that does not exist.
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff not installed (Debian: groff-base)"; exit 77; }
build=$(pwd)
cd "$top/man" || exit 1
fail=0 n=0
for f in man*/*.[1-9]; do
  n=$((n + 1))
  w=$(groff -t -ww -z -man "$f" 2>&1)
  if [ -n "$w" ]; then
    echo "FAIL $f:"; echo "$w" | sed 's/^/    /'; fail=1
  fi
done
echo "linted $n pages"
missing=0
for f in man3/*.3; do
  p=$(basename "$f" .3)
  [ "$p" = mpemu ] && continue
  grep -q "^\.BR $p (3)" man3/mpemu.3 || { echo "FAIL mpemu(3) INDEX does not name $p(3)"; missing=$((missing + 1)); }
done
[ "$missing" -eq 0 ] && echo "mpemu(3) names every page in man3" || fail=1
# every page is installed (and so carried by make dist)
for f in man*/*.[1-9]; do
  cat "$top"/Makefile.am "$top"/*/*.mk | grep -q "man/$f\b" || { echo "FAIL man/$f is installed by no dist_man_MANS"; fail=1; }
done

# every exported function has a page of its own name
libs=""
for l in libmpemu libmpemu-analysis libmpemu-solvers; do [ -f "$build/.libs/$l.so" ] && libs="$libs $build/.libs/$l.so"; done
if [ -n "$libs" ] && command -v nm >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  nm -D --defined-only $libs | awk '$2 == "T" && $3 ~ /^mpe_/ { print $3 }' | sort -u >"${TMPDIR:-/tmp}/mpe_man_syms.$$"
  total=0 have=0
  while read -r s; do
    total=$((total + 1))
    if [ -f "man3/$s.3" ]; then have=$((have + 1)); else echo "FAIL $s is exported but man3/$s.3 does not exist (man $s)"; fail=1; fi
  done <"${TMPDIR:-/tmp}/mpe_man_syms.$$"
  echo "$have of $total exported functions have a page: man NAME works for each"
  [ "$total" -ge 200 ] || { echo "FAIL only $total exported mpe_ functions found in$libs"; fail=1; }
  # the link line: a page that documents a function of libmpemu-analysis says
  # mpemu-analysis, one of libmpemu-solvers mpemu-solvers
  ana=$(nm -D --defined-only "$build/.libs/libmpemu-analysis.so" 2>/dev/null | awk '$2 == "T" && $3 ~ /^mpe_/ { print $3 }')
  sol=$(nm -D --defined-only "$build/.libs/libmpemu-solvers.so" 2>/dev/null | awk '$2 == "T" && $3 ~ /^mpe_/ { print $3 }')
  for s in $(cat "${TMPDIR:-/tmp}/mpe_man_syms.$$"); do
    [ -f "man3/$s.3" ] || continue
    page=man3/$s.3
    so=$(sed -n 's/^\.so //p' "$page")
    [ -n "$so" ] && page=$so
    lib=mpemu
    case " $(echo $ana) " in *" $s "*) lib=mpemu-analysis ;; esac
    case " $(echo $sol) " in *" $s "*) lib=mpemu-solvers ;; esac
    sed 's/\\-/-/g' "$page" | grep -q "pkg-config --cflags --libs $lib)" ||
      { echo "FAIL $page (for $s) does not name its link line: pkg-config --cflags --libs $lib"; fail=1; }
  done
  rm -f "${TMPDIR:-/tmp}/mpe_man_syms.$$"
else
  echo "SKIP the exported-function checks (no shared library in this build)"
fi

# man -k: mandb indexes every page's NAME line (whatis)
if command -v mandb >/dev/null 2>&1 && command -v man >/dev/null 2>&1; then
  idx=$(mktemp -d "${TMPDIR:-/tmp}/mpe_mandb.XXXXXX")
  cp -r man1 man3 "$idx/"
  if mandb -q -c "$idx" >/dev/null 2>&1; then
    n=$(man -M "$idx" -k mpe 2>/dev/null | grep -c '(3)')
    pages=$(ls man3 | wc -l)
    [ "$n" -ge "$pages" ] && echo "man -k mpe finds $n entries for $pages pages in man3" ||
      { echo "FAIL man -k mpe finds $n entries, man3 has $pages pages"; fail=1; }
    man -M "$idx" -k mpanalyze 2>/dev/null | grep -q '^mpanalyze (1)' || { echo "FAIL man -k mpanalyze"; fail=1; }
  else
    echo "FAIL mandb cannot index the pages"; fail=1
  fi
  rm -rf "$idx"
else
  echo "SKIP man -k (no mandb)"
fi

# no history in what users read; no citation outside the repository
cd "$top" || exit 1
hist='[Ii]ssue #?[0-9]|[Ss]itting|20[0-9][0-9]-[01][0-9]|\bwas\b[^.]*\bnow\b|\(was [0-9]'
hits=$(grep -nE "$hist" README.md man/man*/*.[1-9] lib/mpemu.h lib/mpemu/*.h lib/mpemu/formats.def 2>/dev/null | grep -v ':\.TH ')
if [ -x "$build/mpanalyze" ]; then
  for c in "" range scale update refine cg memory order; do
    "$build/mpanalyze" $c --help 2>&1 | grep -nE "$hist" | sed "s/^/mpanalyze $c --help:/"
  done >"${TMPDIR:-/tmp}/mpe_help.$$"
  [ -x "$build/gpu/mpe-gpucheck" ] &&
    "$build/gpu/mpe-gpucheck" --help 2>&1 | grep -nE "$hist" | sed "s/^/mpe-gpucheck --help:/" >>"${TMPDIR:-/tmp}/mpe_help.$$"
  hits="$hits$(cat "${TMPDIR:-/tmp}/mpe_help.$$")"
  rm -f "${TMPDIR:-/tmp}/mpe_help.$$"
fi
[ -z "$hits" ] && echo "README.md, the pages, the installed headers and --help carry no history" ||
  { echo "FAIL history in a user-facing text (it belongs in a commit message):"; echo "$hits" | sed 's/^/    /'; fail=1; }
# the tracked files; outside a git checkout (a tarball, CI's archive copy) the sources by name
files=$(git ls-files 2>/dev/null) || files=""
[ -n "$files" ] || files=$(find . -type f \( -name '*.[ch]' -o -name '*.md' -o -name '*.[1-9]' -o -name '*.sh' \
  -o -name '*.py' -o -name '*.am' -o -name '*.mk' -o -name '*.ac' -o -name '*.cu' -o -name '*.def' \) \
  ! -path './.git/*' ! -path './autom4te.cache/*' | sed 's|^\./||')
out=$(echo "$files" | grep -v '^tests/check_man\.sh$' | xargs grep -InE '\.\./shared|/work/shared' 2>/dev/null)
[ -z "$out" ] && echo "no file cites ../shared" || { echo "FAIL files cite a path outside the repository:"; echo "$out" | sed 's/^/    /'; fail=1; }
secs=$(sed -n 's/^##* \([0-9][0-9.]*\)[. ].*/\1/p' docs/DESIGN.md | sed 's/\.$//')
out=$(echo "$files" | grep -v '^tests/check_man\.sh$' |
  xargs grep -InoE '(docs/)?DESIGN(\.md)?`? *(§|\\\(sc)? *[0-9]([0-9.]*[0-9])?' 2>/dev/null |
  while IFS= read -r m; do
    c=${m#*:*:}
    n=$(printf '%s' "$c" | sed 's/.*[^0-9.]\([0-9][0-9.]*\)$/\1/; s/\.$//')
    case $c in docs/DESIGN.md*) echo "$secs" | grep -qx "$n" || echo "$m" ;; *) echo "$m" ;; esac
  done)
bare=$(echo "$files" | grep -vE '^(docs/DESIGN\.md|tests/check_man\.sh)$' | xargs grep -InE 'DESIGN' 2>/dev/null | grep -vE 'docs/DESIGN\.md' )
[ -z "$out$bare" ] && echo "every DESIGN citation names docs/DESIGN.md and a section it has ($(echo $secs | wc -w) sections)" ||
  { echo "FAIL citations of a missing document or section:"; echo "$out$bare" | sed 's/^/    /'; fail=1; }
exit $fail
