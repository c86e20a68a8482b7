/* make bench: one training step of lab (b) (MLP 32-128-4, ReLU, cross-entropy,
   SGD with momentum, batch 128) under O1, O2 and O3 on emulated tensor cores,
   as a ratio to the same step under O0 (binary32, no tensor cores) measured in
   this run on the same data. Best of several timings, all cores. */
#include <stdio.h>
#include <stdlib.h>
#include <mpemu.h>
#include "benchutil.h"

enum { B = 128, D = 32, H = 128, NTRAIN = 4096 };

static double step_time(mpe_train_level level, mpe_type low, const char *model, const float *x, const int *lab)
{
  mpe_train_arch arch = { 2, { D, H, 4 }, MPE_TRAIN_RELU, MPE_TRAIN_XENT, B, 1 };
  mpe_train_policy pol = { level, low, model, NULL, 0 };
  mpe_train_optim opt = { MPE_TRAIN_SGD, 0.05f, 0.9f, 0, 0, 0 };
  mpe_train_net *net;
  if (mpe_train_net_alloc(&net, &arch, &pol, &opt))
    return -1;
  mpe_train_step_info info;
  int t = 0;
  for (int w = 0; w < 5; w++, t++)   /* warm up: thread pool, caches */
    mpe_train_step(net, x + (size_t)(t % (NTRAIN / B)) * B * D, NULL, lab + (t % (NTRAIN / B)) * B, B, &info);
  double best;
  BENCH_BEST(15, best, {
    for (int k = 0; k < 4; k++, t++)
      mpe_train_step(net, x + (size_t)(t % (NTRAIN / B)) * B * D, NULL, lab + (t % (NTRAIN / B)) * B, B, &info);
  });
  mpe_train_net_free(net);
  return best / 4;
}

int main(void)
{
  float *x = malloc((size_t)NTRAIN * D * sizeof *x);
  int *lab = malloc(NTRAIN * sizeof *lab);
  if (!x || !lab || mpe_train_spirals(x, lab, NTRAIN, D, 1))
    return 1;
  static const struct { mpe_train_level level; mpe_type low; const char *model; } rows[] = {
    { MPE_TRAIN_O1, MPE_FP16, "h100" }, { MPE_TRAIN_O1, MPE_FP16, "v100" }, { MPE_TRAIN_O1, MPE_BF16, "h100" },
    { MPE_TRAIN_O2, MPE_FP16, "h100" }, { MPE_TRAIN_O3, MPE_FP16, "h100" },
  };
  printf("training step of lab (b): MLP %d-%d-4, batch %d, SGD momentum; vs O0 = t(O0) / t(level), %s\n",
         D, H, B, mpe_cpu_features());
  double t0 = step_time(MPE_TRAIN_O0, MPE_FP16, NULL, x, lab);
  printf("%-5s %-5s %-5s %12s %9s\n", "level", "input", "model", "step [ms]", "vs O0");
  printf("%-5s %-5s %-5s %12.3f %9.2f\n", "O0", "fp32", "-", 1e3 * t0, 1.0);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    double t = step_time(rows[i].level, rows[i].low, rows[i].model, x, lab);
    if (t < 0)
      return 1;
    printf("%-5s %-5s %-5s %12.3f %9.2f\n", mpe_train_level_name(rows[i].level), mpe_type_name(rows[i].low),
           rows[i].model, 1e3 * t, t0 / t);
  }
  free(x);
  free(lab);
  return 0;
}
