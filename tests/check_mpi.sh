#!/bin/sh
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
for np in 2 3; do
  check $np --format fp32
  check $np --format fp16 --sigma 1
  check $np --format bf16 --round rz
  check $np --format e4m3 --scale 1024
  check $np --format bf16 --round sr --seed 7
done
# the control: the real ring against the tree's order must not match (3 ranks, bf16)
out=$($run -np 3 "$prog" --n 3001 --format bf16 --compare tree 2>&1)
rc=$?
case $out in
  *'"bits_differ_from_emulation": 0,'*) bad "control: ring matched the tree order: $out" ;;
  *'"bits_differ_from_emulation": '[1-9]*) [ $rc -eq 1 ] && ok "control: ring vs tree order differ: $out" || bad "control rc $rc" ;;
  *) bad "control: $out" ;;
esac
exit $fail
