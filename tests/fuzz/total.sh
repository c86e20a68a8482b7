#!/bin/sh
# Executions of each fuzz target summed over every recorded run (tests/fuzz/runs.tsv),
# against the goal of 10^7 per target, and the crashes recorded.
here=$(cd "$(dirname "$0")" && pwd)
awk -F'\t' '!/^#/ && NF >= 6 { n[$2] += $3; s[$2] += $4; c[$2] += $6; r[$2]++; if ($1 > d[$2]) d[$2] = $1 }
  END {
    printf "%-12s %5s %12s %8s %8s %-10s %s\n", "target", "runs", "executions", "seconds", "crashes", "last", "10^7"
    split("npy npz safetensors text raw pt pkl mtx cli", k, " ")
    for (i = 1; i <= 9; i++) { t = k[i]
      printf "%-12s %5d %12d %8d %8d %-10s %s\n", t, r[t], n[t], s[t], c[t], d[t], (n[t] >= 1e7 ? "reached" : sprintf("%.0f%%", 100 * n[t] / 1e7)) }
  }' "$here/runs.tsv"
