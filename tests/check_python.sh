#!/bin/sh
# The Python package (python/mpemu) against the library just built: its pytest suite,
# with the package taken from the source tree and libmpemu from the libtool build tree.
# Skipped (exit 77) when no python3 with NumPy and pytest is found (Debian: python3-numpy
# python3-pytest). PYTHON names the interpreter to use. Then the README's Python tour
# (examples/tour.py).
set -u
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
lib=$(pwd)/.libs/libmpemu.so
# a --disable-shared build (the CI's sanitizer run) has no shared library for ctypes to load
if [ ! -f "$lib" ]; then
  if [ -f "$(pwd)/.libs/libmpemu.a" ]; then echo "check_python: static-only build (no libmpemu.so): skipped"; exit 77; fi
  echo "check_python: $lib not built"; exit 1
fi
py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "import numpy, pytest" >/dev/null 2>&1; then py=$p; break; fi
done
[ -n "$py" ] || { echo "check_python: no python3 with numpy and pytest: skipped"; exit 77; }
# a sanitizer build: the ASan runtime must be loaded before python3 starts
if ldd "$lib" 2>/dev/null | grep -q libasan; then
  asan=$(${CC:-cc} -print-file-name=libasan.so)
  export LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
export MPEMU_LIB="$lib" PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}" MPE_SRCDIR="$top"
export MPANALYZE="$(pwd)/mpanalyze"
"$py" -c "import torch" >/dev/null 2>&1 ||
  echo "check_python: torch is not importable by $py: python/tests/test_torch.py skipped (.ci/run's torch stage runs it)"
"$py" -m pytest -q -p no:cacheprovider "$top/python/tests" || exit 1
# the README's Python tour, as written, in a folder that holds its checkpoint.pt
tmp=$(mktemp -d /tmp/mpe_check_python.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$top/tests/data/pt/nested.pt" "$tmp/checkpoint.pt"
(cd "$tmp" && "$py" "$top/examples/tour.py") || { echo "FAIL examples/tour.py"; exit 1; }
echo "ok   examples/tour.py"
