#!/bin/sh
# Build the libFuzzer targets for the tensor-file and Matrix Market readers (clang,
# -fsanitize=fuzzer,address,undefined) outside the normal build, then run each
# for RUNS executions (default 200000) on its corpus in tests/fuzz/corpus/KIND.
# with its dictionary tests/fuzz/dict/KIND.dict. New inputs found are added to the corpus; crashes are written to
# tests/fuzz/crashes/ (commit them: make check replays them).
#   tests/fuzz/run.sh [RUNS] [KIND...]       KIND: npy npz safetensors text raw pt pkl mtx cli
# (cli: mpanalyze range itself, on a file whose first byte picks the reader and options; it
# needs a whole clang build of the library and the tool, made once under $FUZZ_BUILD/tree)
# FUZZ_SECONDS=S bounds each target's run by time as well (libFuzzer's -max_total_time).
# FUZZ_TIMEOUT=S is libFuzzer's -timeout and -report_slow_units (default 10): wall-clock, so raise
# it for a run at idle priority on a busy machine, where a starved process can wait longer than that.
# (pkl: the pickle of a torch.save file alone; the target wraps it in a valid archive, so that
# mutations reach the interpreter instead of failing the zip's CRC as most pt inputs do)
# A dictionary tests/fuzz/KIND.dict is used when there is one.
# Each run is recorded as a line of tests/fuzz/runs.tsv (date, target, executions, seconds,
# corpus size after the merge, crashes): tests/fuzz/total.sh sums them per target.
# FUZZ_CI=1: a check, not a run to keep: the corpus is neither merged nor recorded, crashes
# go to $FUZZ_BUILD/ci-crashes/, and the script fails if any target crashed, ran out of
# memory or timed out (CI: FUZZ_CI=1 FUZZ_SECONDS=15 tests/fuzz/run.sh 100000000 KIND...).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
runs=${1:-200000}
[ $# -gt 0 ] && shift
kinds=${*:-npy npz safetensors text raw pt mtx}
out=${FUZZ_BUILD:-/tmp/mpemu-fuzz}
mkdir -p "$out" "$here/crashes"
CC=${CC_FUZZ:-clang}
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$here -I$top -I$top/lib -I$top/analysis"
[ -f "$top/lib/mpemu/version.h" ] || { echo "run configure first (lib/mpemu/version.h is generated)"; exit 1; }
# the readers and the scalar decoders they use (no SIMD kernels: they are not reached)
srcs="$top/analysis/mpai.c $top/analysis/io/io.c $top/analysis/io/io_member.c $top/analysis/io/io_pt.c $top/analysis/io/io_text.c $top/analysis/io/io_write.c $top/lib/error.c $top/lib/flags.c
      $top/lib/version.c $top/emu/format.c $top/emu/philox.c $top/emu/round_ref.c $top/emu/convert.c"
for k in $kinds; do
  case $k in
    npy) K=MPE_IO_NPY;; npz) K=MPE_IO_NPZ;; safetensors) K=MPE_IO_SAFETENSORS;; text) K=MPE_IO_TEXT;;
    raw) K=MPE_IO_RAW;; pt) K=MPE_IO_PT;; mtx) K=mtx;; pkl) K=pkl;; cli) K=cli;;
    *) echo "unknown kind $k"; exit 2;;
  esac
  if [ "$K" = cli ]; then   # the working tree, built with clang and the fuzzer's coverage
    tree="$out/tree"
    if [ ! -f "$tree/.libs/libmpemu-analysis.a" ] || [ ! -x "$tree/mpanalyze" ]; then
      rm -rf "$tree" && mkdir -p "$tree"
      (cd "$top" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$tree"
      (cd "$tree" && autoreconf -fi >/dev/null 2>&1 &&
       ./configure -q CC="$CC" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
         LDFLAGS="-fsanitize=address,undefined" --disable-shared --without-cuda --without-mpi >/dev/null &&
       make -s -j2 libmpemu.la libmpemu-analysis.la mpanalyze >/dev/null)
    fi
    deps=$(sed -n "s/^dependency_libs='\(.*\)'/\1/p" "$tree/libmpemu.la" "$tree/libmpemu-analysis.la" \
             "$tree/libmpemu-solvers.la" | tr '\n' ' ' | sed 's|[^ ]*libmpemu[-a-z]*\.la||g')
    $CC $flags -fopenmp -o "$out/fuzz_cli" "$here/fuzz_cli.c" \
      $(ls "$tree"/analysis/mpanalyze/mpanalyze-*.o | grep -v mpanalyze-main.o) "$tree/.libs/libmpemu-solvers.a" \
      "$tree/.libs/libmpemu-analysis.a" "$tree/.libs/libmpemu.a" \
      $deps $(sed -n 's/^PLPLOT_LIBS = //p' "$tree/Makefile") $(pkg-config --libs jansson libzip) -lm
  elif [ "$K" = pkl ]; then   # the PyTorch pickle alone, wrapped in a valid archive by the target
    $CC $flags -o "$out/fuzz_pkl" "$here/fuzz_pt_pickle.c" $srcs $(pkg-config --cflags --libs jansson libzip) -lm
  elif [ "$K" = mtx ]; then
    $CC $flags -o "$out/fuzz_mtx" "$here/fuzz_mtx.c" "$top/analysis/solvers/mmio.c" "$top/analysis/solvers/matgen.c" \
      "$top/lib/error.c" $(pkg-config --cflags --libs gsl) -lm
  else
    $CC $flags -DFUZZ_KIND=$K -o "$out/fuzz_$k" "$here/fuzz_reader.c" $srcs \
      $(pkg-config --cflags --libs jansson libzip) -lm
  fi
  mkdir -p "$here/corpus/$k" "$out/new_$k"
  arts="$here/crashes/$k-"
  if [ "${FUZZ_CI:-0}" = 1 ]; then
    rm -rf "$out/ci-crashes" "$out/new_$k" && mkdir -p "$out/ci-crashes" "$out/new_$k"
    arts="$out/ci-crashes/$k-"
  fi
  before=$(ls "$(dirname "$arts")" | grep -c "^$(basename "$arts")" || true)
  t0=$(date +%s)
  echo "== fuzz_$k: $runs runs"
  dict="$here/dict/$k.dict"
  [ "$k" = pkl ] && dict="$here/dict/pt.dict"   # the pickle-only target shares the PyTorch dictionary
  ml=4096
  [ "$k" = cli ] && ml=16384   # its seeds are whole files of every kind, torch.save archives included
  "$out/fuzz_$k" -runs="$runs" -max_total_time="${FUZZ_SECONDS:-0}" -max_len=$ml -timeout="${FUZZ_TIMEOUT:-10}" \
    -report_slow_units="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -dict="$dict" -print_final_stats=1 -artifact_prefix="$arts" "$out/new_$k" "$here/corpus/$k" >"$out/log_$k" 2>&1 ||
    true
  grep -E "DONE|^Done|ERROR|crash|leak|oom|timeout|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units" \
    "$out/log_$k" || true
  secs=$(($(date +%s) - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log_$k" | tail -n 1)
  found=$(($(ls "$(dirname "$arts")" | grep -c "^$(basename "$arts")" || true) - before))
  grep -q "ERROR: libFuzzer\|ERROR: AddressSanitizer\|runtime error\|SUMMARY: " "$out/log_$k" && found=$((found > 0 ? found : 1))
  if [ "${FUZZ_CI:-0}" = 1 ]; then
    [ -n "$execs" ] && [ "$found" -eq 0 ] || { echo "fuzz_$k: ${found} crash(es), OOM(s) or timeout(s); see $out/log_$k"; bad=1; }
    continue
  fi
  # keep a minimal corpus: merge what was found into the committed one
  "$out/fuzz_$k" -merge=1 "$here/corpus/$k" "$out/new_$k" >/dev/null 2>&1 || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%d)" "$k" "${execs:-0}" "$secs" \
    "$(ls "$here/corpus/$k" | wc -l)" "$found" "run.sh $runs${FUZZ_SECONDS:+, at most ${FUZZ_SECONDS} s}" >>"$here/runs.tsv"
done
[ "${bad:-0}" = 0 ] || exit 1
