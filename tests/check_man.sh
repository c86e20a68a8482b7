#!/bin/sh
# Every manual page formats without a warning (groff -t -ww: tbl tables,
# undefined macros such as a line that starts with '.npz', broken .so links),
# mpemu(3)'s INDEX names every page in man3, and a dist_man_MANS line installs every page.
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff not installed (Debian: groff-base)"; exit 77; }
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
exit $fail
