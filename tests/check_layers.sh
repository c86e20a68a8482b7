#!/bin/sh
# The three libraries: libmpemu needs only libm, SLEEF and OpenMP (and the CUDA
# runtime when built with CUDA); libmpemu-analysis (readers, range, scalers,
# training, all-reduce) adds Jansson and libzip but neither BLAS/LAPACK nor GSL;
# libmpemu-solvers carries BLAS/LAPACK and GSL. No include climbs (lib <- emu <-
# analysis <- CLI). Installed, a conversions-only program links with
# `pkg-config --libs mpemu` alone, a reader program with `pkg-config --libs
# mpemu-analysis` (no -llapack, no -lgsl on its link line or in its ldd), a
# refinement program with `pkg-config --libs mpemu-solvers`.
# `make install prefix=OTHER` (not the configured prefix) is refused before anything
# is installed, with a message naming ./configure --prefix=OTHER.
top=${MPE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# 1. what each shared library needs
if [ -f .libs/libmpemu.so ] && command -v ldd >/dev/null 2>&1; then
  need=$(ldd .libs/libmpemu.so | awk '{print $1}' | tr '\n' ' ')
  hit=$(echo "$need" | tr ' ' '\n' | grep -E 'openblas|lapack|blas|gsl|jansson|libzip|plplot|mpemu-analysis' | tr '\n' ' ')
  [ -z "$hit" ] && ok "libmpemu.so needs: $need" || bad "libmpemu.so needs $hit"
  need=$(ldd .libs/libmpemu-analysis.so | awk '{print $1}' | tr '\n' ' ')
  case " $need " in *" libmpemu.so.0 "*) ok "libmpemu-analysis.so needs libmpemu.so.0" ;;
    *) bad "libmpemu-analysis.so does not link libmpemu: $need" ;; esac
  hit=$(echo "$need" | tr ' ' '\n' | grep -E 'openblas|lapack|blas|gsl|plplot|mpemu-solvers' | tr '\n' ' ')
  [ -z "$hit" ] && ok "libmpemu-analysis.so needs neither BLAS/LAPACK nor GSL: $need" ||
    bad "libmpemu-analysis.so needs $hit"
  need=$(ldd .libs/libmpemu-solvers.so | awk '{print $1}' | tr '\n' ' ')
  case " $need " in *" libmpemu.so.0 "*) ok "libmpemu-solvers.so needs libmpemu.so.0" ;;
    *) bad "libmpemu-solvers.so does not link libmpemu: $need" ;; esac
  case " $need " in *libmpemu-analysis*) bad "libmpemu-solvers.so needs libmpemu-analysis: $need" ;; esac
  for lib in libmpemu-analysis libmpemu-solvers; do
    und=$(nm -D --undefined-only .libs/$lib.so | awk '{print $2}' | grep -E '^(mpe|mpei|mpai)_' |
          while read -r s; do nm -D --defined-only .libs/libmpemu.so | grep -q " $s\$" || echo "$s"; done | tr '\n' ' ')
    [ -z "$und" ] && ok "$lib.so needs no mpe_ symbol outside libmpemu" || bad "$lib.so needs $und"
  done
  und=$(nm -D --undefined-only .libs/libmpemu.so | grep -E ' (mpe|mpei)_' | tr -s ' ' | tr '\n' ' ')
  [ -z "$und" ] && ok "libmpemu.so leaves no mpe_ symbol undefined" || bad "libmpemu.so needs $und"
else
  echo "SKIP ldd checks (no shared library in this build)"
fi

# 2. no include climbs: the core's headers and sources name no analysis header (the
# umbrella lib/mpemu.h names every header: it is the one exception)
core_h="core convert format arith fixed tc quant gpu sparse version elementwise mx"
ana_h="io range report scaler update ir cg dist train matgen csr"
pat=$(for h in $ana_h; do printf '#include [<"]mpemu/%s\\.h[>"]|' "$h"; done)'#include [<"](\.\./)?analysis/'
for h in $core_h; do
  f="$top/lib/mpemu/$h.h"
  [ -f "$f" ] || f="lib/mpemu/$h.h"
  if grep -En "$pat" "$f" >/dev/null; then bad "core header mpemu/$h.h includes an analysis header"; fi
done
climb=$(cd "$top" && grep -EnH "$pat|#include [<\"](\.\./)?(emu|gpu)/" lib/*.c $(ls lib/*.h | grep -v '^lib/mpemu\.h$') 2>/dev/null;
        cd "$top" && grep -EnH "#include [<\"](\.\./)?gpu/" emu/*.c emu/*.h 2>/dev/null;
        cd "$top" && grep -EnH "$pat" emu/*.c emu/*.h gpu/*.c gpu/*.h 2>/dev/null)
[ -z "$climb" ] && ok "lib/, emu/ and gpu/ include no analysis header; lib/ includes nothing of emu/ or gpu/, emu/ nothing of gpu/" ||
  bad "includes that climb: $climb"
# gpu/ sees of emu/ only the interface emu/ gives it (emu/tc_iface.h), and no
# module reaches into another's internal header (*_impl.h, *_internal.h)
reach=$(cd "$top" && grep -EnH '#include [<"](\.\./)?emu/' gpu/*.c gpu/*.h gpu/*.cu 2>/dev/null | grep -v 'emu/tc_iface\.h"';
        cd "$top" && grep -EnH '#include [<"][^>"]*/[a-z_]*_(impl|internal)\.h[>"]' lib/*.[ch] emu/*.[ch] gpu/*.[ch] gpu/*.cu \
          analysis/*/*.[ch] 2>/dev/null)
[ -z "$reach" ] && ok "gpu/ includes of emu/ only emu/tc_iface.h; no file includes another folder's *_impl.h or *_internal.h" ||
  bad "private headers reached into: $reach"

# 3. installed: pkg-config is enough for each layer
san=$( [ -f .libs/libmpemu.so ] && ldd .libs/libmpemu.so | grep -Eo 'lib(asan|ubsan|tsan)' | head -n 1)
if [ ! -f .libs/libmpemu.so ]; then
  echo "SKIP the installed-prefix builds: no shared library in this build (configured with --disable-shared)"
elif [ -n "$san" ]; then
  echo "SKIP the installed-prefix builds: this build's libraries need $san (a sanitizer build; the plain build runs them)"
elif command -v pkg-config >/dev/null 2>&1 && [ -f Makefile ]; then
  tmp=$(mktemp -d /tmp/mpe_check_layers.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  jansson=$(pkg-config --cflags --libs jansson 2>/dev/null || echo -ljansson)   # the system's, before the prefix's
  # another prefix at install time: refused before anything is installed, naming ./configure --prefix
  if ${MAKE:-make} -s install prefix="$tmp/other" >"$tmp/other.log" 2>&1; then
    bad "make install prefix=$tmp/other (not the configured prefix) succeeded"
  elif grep -q "configure --prefix=$tmp/other" "$tmp/other.log" && [ ! -e "$tmp/other" ]; then
    ok "make install prefix=OTHER refuses at once: $(head -n 1 "$tmp/other.log")"
  else
    bad "make install prefix=OTHER: $(head -c 600 "$tmp/other.log"); installed: $(find "$tmp/other" 2>/dev/null | head -n 3)"
  fi
  if ${MAKE:-make} -s install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1; then
    pc=$(find "$tmp/root" -name mpemu.pc | head -n 1)
    libdir=$(dirname "$(dirname "$pc")")
    export PKG_CONFIG_LIBDIR="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$tmp/root"
    cc=${CC:-cc}
    if $cc -o "$tmp/tour" "$top/examples/tour.c" $(pkg-config --cflags --libs mpemu) -lm 2>"$tmp/err" &&
       LD_LIBRARY_PATH="$libdir" "$tmp/tour" >"$tmp/out" && grep -q '^fp16' "$tmp/out"; then
      ok "examples/tour.c (conversions) built and ran with: pkg-config --libs mpemu = $(pkg-config --libs mpemu)"
    else
      bad "tour with pkg-config mpemu: $(cat "$tmp/err")"
    fi
    cat >"$tmp/reader.c" <<'C'
#include <stdio.h>
#include <mpemu.h>
int main(int argc, char **argv)
{
  mpe_io *f;
  char msg[256];
  if (argc < 2 || mpe_io_open(&f, argv[1], NULL, msg, sizeof msg))
    return 1;
  printf("%zu tensors\n", mpe_io_count(f));
  mpe_io_close(f);
  return 0;
}
C
    if $cc -o "$tmp/reader" "$tmp/reader.c" $(pkg-config --cflags --libs mpemu-analysis) 2>"$tmp/err" &&
       LD_LIBRARY_PATH="$libdir" "$tmp/reader" "$top/tests/data/model.safetensors" >"$tmp/out" && grep -q ' tensors$' "$tmp/out"; then
      ok "a reader program built with: pkg-config --libs mpemu-analysis = $(pkg-config --libs mpemu-analysis): $(cat "$tmp/out")"
    else
      bad "reader with pkg-config mpemu-analysis: $(cat "$tmp/err")"
    fi
    # the dependency rule: a reader links neither LAPACK nor GSL, on its link line or at run time
    line=$(pkg-config --libs mpemu-analysis)
    case " $line " in *-llapack*|*-lgsl*|*-lopenblas*|*-lblas*) bad "pkg-config --libs mpemu-analysis names $line" ;;
      *) ok "a reader's link line names no LAPACK, BLAS or GSL: $line" ;; esac
    if [ -x "$tmp/reader" ]; then
      dyn=$(LD_LIBRARY_PATH="$libdir" ldd "$tmp/reader" | awk '{print $1}' | grep -E 'lapack|blas|gsl' | tr '\n' ' ')
      [ -z "$dyn" ] && ok "the reader loads no LAPACK, BLAS or GSL at run time" || bad "the reader loads $dyn"
    fi
    # a refinement program: mpemu-solvers
    cat >"$tmp/solver.c" <<'C'
#include <stdio.h>
#include <mpemu.h>
int main(void)
{
  double A[4] = { 4, 1, 1, 3 }, b[2] = { 1, 2 }, x[2];
  mpe_ir_opts o;
  mpe_ir_result r;
  mpe_ir_opts_init(&o);
  if (mpe_ir_solve(2, A, 2, b, x, &o, &r))
    return 1;
  printf("x = %.17g %.17g\n", x[0], x[1]);
  return 0;
}
C
    if $cc -o "$tmp/solver" "$tmp/solver.c" $(pkg-config --cflags --libs mpemu-solvers) 2>"$tmp/err" &&
       LD_LIBRARY_PATH="$libdir" "$tmp/solver" >"$tmp/out" && grep -q '^x = ' "$tmp/out"; then
      ok "a refinement program built with: pkg-config --libs mpemu-solvers = $(pkg-config --libs mpemu-solvers): $(cat "$tmp/out")"
    else
      bad "solver with pkg-config mpemu-solvers: $(cat "$tmp/err" "$tmp/out" 2>/dev/null | head -c 600)"
    fi
    if $cc -o "$tmp/solver2" "$tmp/solver.c" $(pkg-config --cflags --libs mpemu-analysis) 2>/dev/null; then
      bad "a refinement program linked without libmpemu-solvers"
    else
      ok "the solvers are not in libmpemu-analysis (linking mpe_ir_solve with mpemu-analysis alone fails)"
    fi
    if $cc -o "$tmp/reader2" "$tmp/reader.c" $(pkg-config --cflags --libs mpemu) 2>/dev/null; then
      bad "a reader program linked without libmpemu-analysis"
    else
      ok "the readers are not in libmpemu (linking a reader with mpemu alone fails)"
    fi
    # the labs: their .c and examples/lab_util.c against the installed headers alone
    # the README's tour, each built as its first lines say, against the installed prefix
    for t in tour_round:mpemu tour_gemm:mpemu tour_int8:mpemu tour_range:mpemu-analysis; do
      ex=${t%%:*} pc=${t#*:}
      if $cc -o "$tmp/$ex" "$top/examples/$ex.c" $(pkg-config --cflags --libs $pc) -lm 2>"$tmp/err" &&
         LD_LIBRARY_PATH="$libdir" "$tmp/$ex" >"$tmp/out" 2>&1; then
        ok "examples/$ex.c built and ran against the installed prefix: cc $ex.c \$(pkg-config --cflags --libs $pc)"
      else
        bad "examples/$ex.c against the installed prefix: $(head -c 600 "$tmp/err") $(tail -n 3 "$tmp/out")"
      fi
    done
    for lab in amp_lab mlp_lab sparse_lab ddp_lab; do
      extra=""
      case $lab in amp_lab|mlp_lab) extra=$jansson ;; esac
      if $cc -o "$tmp/$lab" "$top/examples/$lab.c" "$top/examples/lab_util.c" -I"$top/examples" \
           $(pkg-config --cflags --libs mpemu-analysis) $extra -lm 2>"$tmp/err" &&
         LD_LIBRARY_PATH="$libdir" "$tmp/$lab" --help >"$tmp/out" 2>&1; then
        ok "examples/$lab built out of the tree: cc $lab.c lab_util.c \$(pkg-config --cflags --libs mpemu-analysis${extra:+ jansson}) -lm"
      else
        bad "$lab out of the tree: $(head -c 600 "$tmp/err")"
      fi
    done
  else
    tail -n 20 "$tmp/install.log"
    bad "make install DESTDIR=$tmp/root failed"
  fi
fi
[ $fails -eq 0 ]
