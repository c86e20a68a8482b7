/* mpanalyze memory: per-GPU bytes of model states (and activations) for
   data-parallel training with ZeRO stages 0-3 (mpe_memory_estimate(3)). */
#include <config.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpanalyze.h"

/* bytes: a number with an optional B, kB, MB, GB, TB, KiB, MiB, GiB, TiB suffix,
   0 or from 1 to 1e18 */
static int parse_bytes(const char *s, double *v)
{
  static const mpa_unit units[] = {
    { "b", 1 }, { "kb", 1e3 }, { "mb", 1e6 }, { "gb", 1e9 }, { "tb", 1e12 },
    { "kib", 1024.0 }, { "mib", 1048576.0 }, { "gib", 1073741824.0 }, { "tib", 1099511627776.0 } };
  double x;
  if (mpa_parse_units(s, units, sizeof units / sizeof units[0], &x))
    return -1;
  /* none, or from one byte to 10^18 (an exabyte per GPU): every sum the
     estimate forms stays finite, and -0 is no byte count */
  if (!(x == 0 || (x >= 1 && x <= 1e18)))
    return -1;
  *v = x == 0 ? 0.0 : x;
  return 0;
}

/* seq=S,batch=B,hidden=H,layers=L,heads=A */
static int parse_model(const char *s, double *bytes)
{
  double val[5] = { 0, 0, 0, 0, 0 };
  static const char *const keys[5] = { "seq", "batch", "hidden", "layers", "heads" };
  char buf[256];
  if (strlen(s) >= sizeof buf)
    return -1;
  strcpy(buf, s);
  for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (!eq)
      return -1;
    *eq = 0;
    int k;
    for (k = 0; k < 5; k++)
      if (!strcmp(t, keys[k]))
        break;
    if (k == 5 || mpa_parse_count(eq + 1, &val[k]))
      return -1;
  }
  return mpe_memory_activations(bytes, val[0], val[1], val[2], val[3], val[4]) ? -1 : 0;
}

struct activations { double bytes; const char *text; };

static int take_activations(const char *arg, void *field)
{
  struct activations *a = field;
  a->text = arg;
  return strchr(arg, '=') ? parse_model(arg, &a->bytes) : parse_bytes(arg, &a->bytes);
}

static int take_optimizer(const char *arg, void *field)
{
  int k = mpe_memory_optimizer_lookup(arg);
  if (k < 0)
    return -1;
  *(mpe_memory_optimizer *)field = (mpe_memory_optimizer)k;
  return 0;
}

static int take_precision(const char *arg, void *field)
{
  int k = mpe_memory_precision_lookup(arg);
  if (k < 0)
    return -1;
  *(mpe_memory_precision *)field = (mpe_memory_precision)k;
  return 0;
}

int mpa_cmd_memory(int argc, char **argv)
{
  mpe_memory_config c = { 0, MPE_OPT_ADAM, MPE_PREC_AMP_FP16, 0, 1, 0 };
  struct activations act = { 0, NULL };
  int json = 0, quiet = 0;
  const mpa_opt opts[] = {
    { "params", 'p', MPA_COUNT, &c.params, 0, 0, "N", "number of parameters: 1.3e9, 7.5B, 350M, 125k", NULL, NULL, 0 },
    { "optimizer", 'o', MPA_CALL, &c.optimizer, 0, 0, "O", "adam (default), sgd (with momentum), adafactor",
      "adam, sgd, adafactor", (const void *)take_optimizer, MPA_WORD },
    { "precision", 'P', MPA_CALL, &c.precision, 0, 0, "P", "amp-fp16 (default), amp-bf16, fp32, fp8",
      "fp32, amp-fp16, amp-bf16, fp8", (const void *)take_precision, MPA_WORD },
    { "zero", 'z', MPA_INT, &c.zero, 0, 3, "S", "ZeRO-DP stage 0 (plain data parallel, default), 1, 2, 3",
      "0, 1, 2 or 3", NULL, 0 },
    { "gpus", 'g', MPA_INT, &c.gpus, 1, 1 << 30, "N", "data-parallel GPUs (default 1)", NULL, NULL, 0 },
    { "activations", 'a', MPA_CALL, &act, 0, 0, "A",
      "activation bytes per GPU (12e9, 12GB, 3.5GiB), or a GPT-style\n"
      "model: seq=S,batch=B,hidden=H,layers=L,heads=A (16-bit, no\n"
      "recomputation; Korthikanti et al. 2022)",
      "bytes such as 12GB, or seq=S,batch=B,hidden=H,layers=L,heads=A", (const void *)take_activations, 0 },
    MPA_OPT_JSON(&json),
    { "quiet", 'q', MPA_FLAG, &quiet, 0, 0, NULL, "no notes", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "memory", "usage: mpanalyze memory --params N [options]",
                        "Bytes are counted per GPU; GB = 10^9 bytes, as in the ZeRO paper.", opts };
  int rc = mpa_parse_no_operands(&cli, argc, argv);
  if (rc >= 0)
    return rc;
  if (!(c.params > 0))
    return mpa_error("memory", "--params is required (mpanalyze memory --help)");
  c.activations = act.bytes;
  const char *act_text = act.text;
  mpe_memory_report r;
  rc = mpe_memory_estimate(&r, &c);
  if (rc)
    return mpa_error(NULL, "%s", mpe_strerror(rc));

  struct { const char *name; double per_param, bytes; int part; } rows[] = {
    { "weights", r.weight_bytes, r.weights, c.zero >= 3 },
    { "gradients", r.gradient_bytes, r.gradients, c.zero >= 2 },
    { "master weights", r.master_bytes, r.master, c.zero >= 1 },
    { "optimizer state", r.optimizer_bytes, r.optimizer, c.zero >= 1 },
  };
  if (json) {
    json_t *doc = json_object(), *per = json_object(), *gpu = json_object();
    json_object_set_new(doc, "command", json_string("memory"));
    json_object_set_new(doc, "params", json_real(c.params));
    json_object_set_new(doc, "optimizer", json_string(mpe_memory_optimizer_name(c.optimizer)));
    json_object_set_new(doc, "precision", json_string(mpe_memory_precision_name(c.precision)));
    json_object_set_new(doc, "zero", json_integer(c.zero));
    json_object_set_new(doc, "gpus", json_integer(c.gpus));
    json_object_set_new(per, "weights", json_real(r.weight_bytes));
    json_object_set_new(per, "gradients", json_real(r.gradient_bytes));
    json_object_set_new(per, "master_weights", json_real(r.master_bytes));
    json_object_set_new(per, "optimizer_state", json_real(r.optimizer_bytes));
    json_object_set_new(per, "k", json_real(r.k));
    json_object_set_new(doc, "bytes_per_param", per);
    json_object_set_new(gpu, "weights", json_real(r.weights));
    json_object_set_new(gpu, "gradients", json_real(r.gradients));
    json_object_set_new(gpu, "master_weights", json_real(r.master));
    json_object_set_new(gpu, "optimizer_state", json_real(r.optimizer));
    json_object_set_new(gpu, "activations", json_real(r.activations));
    json_object_set_new(gpu, "total", json_real(r.total));
    json_object_set_new(doc, "bytes_per_gpu", gpu);
    rc = mpa_json_print(doc);
    json_decref(doc);
    return rc;
  }
  printf("memory per GPU: %.4g parameters, %s, %s, ZeRO stage %d, %d GPU%s\n", c.params,
         mpe_memory_precision_name(c.precision), mpe_memory_optimizer_name(c.optimizer), c.zero,
         c.gpus, c.gpus == 1 ? "" : "s");
  static const mpa_col cols[] = { { "", -16 }, { "bytes/param", 10 }, { "per GPU (GB)", 14 }, { "partitioned", 12 } };
  mpa_cellbuf b1, b2;
  mpa_table_head(stdout, cols, 4);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    mpa_table_row(stdout, cols, 4, rows[i].name, mpa_cell(&b1, "%g", rows[i].per_param),
                  mpa_cell(&b2, "%.4f", rows[i].bytes / 1e9), rows[i].part ? "yes" : "no");
  mpa_table_row(stdout, cols, 4, "activations", act_text ? "" : "-", mpa_cell(&b2, "%.4f", r.activations / 1e9), "no");
  mpa_table_row(stdout, cols, 3, "total", mpa_cell(&b1, "%g", r.weight_bytes + r.gradient_bytes + r.k),
                mpa_cell(&b2, "%.4f", r.total / 1e9));
  if (!quiet)
    printf("K = %g bytes of master weights and optimizer state per parameter (ZeRO, Rajbhandari et al.\n"
           "2020); GB = 10^9 bytes. Not counted: buffers, fragmentation, the framework. mpanalyze(1).\n", r.k);
  return MPA_EXIT_OK;
}
