/* Lab (b): a two-layer MLP classifier on a synthetic 4-class spiral problem
   (generated here, mpe_train_spirals) trained under O0-O3, for FP16 and BF16, on
   emulated V100 and H100 tensor cores. Prints the test accuracy of every run
   and the time it took. See examples/mlp_lab.md for what to look for. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <mpemu.h>
#include "lab_util.h"

#define MAXLIST 8

typedef struct {
  mpe_train_level level;
  const char *fmt, *model;
  mpe_type low;   /* the format's type (O1-O3) */
  int ran, unsupported, diverged;
  double *loss;
  size_t nloss;
  double final_loss, accuracy, train_accuracy, seconds, final_scale;
  uint64_t updates, lost, skipped;
  char name[48];
} run;

static void usage(FILE *o)
{
  fprintf(o, "usage: mlp_lab [options]\n"
             "  --levels L       comma-separated opt levels (default O0,O1,O2,O3)\n"
             "  --formats F      comma-separated low formats (default fp16,bf16)\n"
             "  --model M        tensor-core models, comma-separated (default v100,h100); the\n"
             "                   names with FP16 or BF16 tensor cores:\n");
  lab_print_models(o, "                     ", (const mpe_type[]){ MPE_FP16, MPE_BF16 }, 2);
  fprintf(o, "  --epochs E       passes over the training set (default 20)\n"
             "  --train N --test N   dataset sizes (default 4096, 1024)\n"
             "  --dim D --hidden H   input dimension and hidden width (default 32, 128)\n"
             "  --batch B        minibatch (default 128)\n"
             "  --optim sgd|adam (default sgd, momentum 0.9)   --lr LR (default 0.05 sgd, 0.003 adam)\n"
             "  --act relu|gelu  (default relu)\n"
             "  --seed S         data and initial weights (default 1)\n"
             "  --json           one JSON document on stdout instead of the table\n"
             "  --plot FILE      training-loss curves of every run (.svg or .png)\n");
}

static int split(char *s, const char **out, int max)
{
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(s, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
    out[n++] = t;
  return n;
}

static double accuracy(mpe_train_net *net, const float *x, const int *lab, int n, int d, int batch, float *out)
{
  int good = 0;
  for (int i0 = 0; i0 < n; i0 += batch) {
    int m = n - i0 < batch ? n - i0 : batch;
    if (mpe_train_forward(net, x + (size_t)i0 * d, m, out))
      return NAN;
    good += lab_count_correct(out, lab + i0, m, 4);
  }
  return (double)good / n;
}

/* the command line */
typedef struct {
  char levels[64], formats[64], models[64];
  const char *plot, *optim, *actname;
  long epochs, ntrain, ntest, dim, hidden, batch, seed;
  double lr;
  int json;
} options;

/* Reads the options into *o: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, options *o)
{
  static const struct option lo[] = {
    { "levels", required_argument, 0, 'L' }, { "formats", required_argument, 0, 'f' },
    { "format", required_argument, 0, 'f' }, { "model", required_argument, 0, 'm' },
    { "models", required_argument, 0, 'm' }, { "epochs", required_argument, 0, 'E' },
    { "train", required_argument, 0, 'T' }, { "test", required_argument, 0, 't' },
    { "dim", required_argument, 0, 'D' }, { "hidden", required_argument, 0, 'H' },
    { "batch", required_argument, 0, 'B' }, { "optim", required_argument, 0, 'o' },
    { "lr", required_argument, 0, 'r' }, { "act", required_argument, 0, 'a' },
    { "seed", required_argument, 0, 'S' }, { "json", no_argument, 0, 'j' },
    { "plot", required_argument, 0, 'p' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  *o = (options){ "O0,O1,O2,O3", "fp16,bf16", "v100,h100", NULL, "sgd", "relu", 20, 4096, 1024, 32, 128, 128, 1, 0, 0 };
  int c;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    int bad = 0;
    switch (c) {
    case 'L': snprintf(o->levels, sizeof o->levels, "%s", optarg); break;
    case 'f': snprintf(o->formats, sizeof o->formats, "%s", optarg); break;
    case 'm': snprintf(o->models, sizeof o->models, "%s", optarg); break;
    case 'E': bad = lab_parse_long(optarg, 1, 100000, &o->epochs); break;
    case 'T': bad = lab_parse_long(optarg, 1, 1 << 24, &o->ntrain); break;
    case 't': bad = lab_parse_long(optarg, 1, 1 << 24, &o->ntest); break;
    case 'D': bad = lab_parse_long(optarg, 2, 1 << 14, &o->dim); break;
    case 'H': bad = lab_parse_long(optarg, 1, 1 << 14, &o->hidden); break;
    case 'B': bad = lab_parse_long(optarg, 1, 1 << 16, &o->batch); break;
    case 'S': bad = lab_parse_long(optarg, 0, 1L << 40, &o->seed); break;
    case 'o': o->optim = optarg; bad = strcmp(optarg, "sgd") && strcmp(optarg, "adam"); break;
    case 'a': o->actname = optarg; bad = strcmp(optarg, "relu") && strcmp(optarg, "gelu"); break;
    case 'r': { char *e; o->lr = strtod(optarg, &e); bad = e == optarg || *e || !(o->lr > 0); break; }
    case 'j': o->json = 1; break;
    case 'p': o->plot = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    if (bad) {
      fprintf(stderr, "mlp_lab: bad option value '%s'\n", optarg);
      return 2;
    }
  }
  if (o->plot && lab_plot_check("mlp_lab", o->plot))
    return 2;
  return -1;
}

/* The runs the options ask for into R[*nr]: O0 once, then every level, format and
   model. 0, or 2 for an unknown level, format or model. */
static int plan_runs(options *o, run *R, int *nr)
{
  const char *lv[MAXLIST], *fm[MAXLIST], *md[MAXLIST];
  int nlv = split(o->levels, lv, MAXLIST), nfm = split(o->formats, fm, MAXLIST), nmd = split(o->models, md, MAXLIST);
  int want[MPE_TRAIN_NLEVELS] = { 0 };
  for (int i = 0; i < nlv; i++) {
    int l = mpe_train_level_lookup(lv[i]);
    if (l < 0) {
      fprintf(stderr, "mlp_lab: unknown level '%s' (O0, O1, O2, O3)\n", lv[i]);
      return 2;
    }
    want[l] = 1;
  }
  mpe_type lows[MAXLIST];
  for (int i = 0; i < nfm; i++) {
    const mpe_format *f = mpe_format_lookup(fm[i]);
    if (f != mpe_format_of(MPE_FP16) && f != mpe_format_of(MPE_BF16)) {
      fprintf(stderr, "mlp_lab: --formats takes fp16 and bf16, not '%s'\n", fm[i]);
      return 2;
    }
    lows[i] = f == mpe_format_of(MPE_FP16) ? MPE_FP16 : MPE_BF16;
    fm[i] = mpe_format_name(f);
  }
  for (int i = 0; i < nmd; i++)
    if (!mpe_tc_model_get(md[i], MPE_FP16) && !mpe_tc_model_get(md[i], MPE_BF16)) {
      fprintf(stderr, "mlp_lab: unknown --model '%s'\n", md[i]);
      return 2;
    }
  *nr = 0;
  if (want[MPE_TRAIN_O0]) {
    R[*nr].level = MPE_TRAIN_O0;
    R[*nr].fmt = "fp32";
    R[*nr].model = "-";
    R[*nr].low = MPE_FP16;
    (*nr)++;
  }
  for (int l = MPE_TRAIN_O1; l <= MPE_TRAIN_O3; l++)
    if (want[l])
      for (int i = 0; i < nfm; i++)
        for (int k = 0; k < nmd; k++) {
          R[*nr].level = (mpe_train_level)l;
          R[*nr].fmt = fm[i];
          R[*nr].low = lows[i];
          R[*nr].model = md[k];
          (*nr)++;
        }
  return 0;
}

/* the training and test sets: one draw from the distribution, split */
typedef struct {
  float *xtr, *xte;
  int *ytr, *yte;
} dataset;

static int make_data(const options *o, dataset *d)
{
  const long ntrain = o->ntrain, ntest = o->ntest, dim = o->dim;
  d->xtr = malloc((size_t)ntrain * dim * sizeof *d->xtr);
  d->xte = malloc((size_t)ntest * dim * sizeof *d->xte);
  d->ytr = malloc((size_t)ntrain * sizeof *d->ytr);
  d->yte = malloc((size_t)ntest * sizeof *d->yte);
  float *all = malloc((size_t)(ntrain + ntest) * dim * sizeof *all);
  int *lab = malloc((size_t)(ntrain + ntest) * sizeof *lab);
  if (!d->xtr || !d->xte || !d->ytr || !d->yte || !all || !lab)
    return 1;
  mpe_train_spirals(all, lab, (int)(ntrain + ntest), (int)dim, (uint64_t)o->seed);
  memcpy(d->xtr, all, (size_t)ntrain * dim * sizeof *d->xtr);
  memcpy(d->ytr, lab, (size_t)ntrain * sizeof *d->ytr);
  memcpy(d->xte, all + (size_t)ntrain * dim, (size_t)ntest * dim * sizeof *d->xte);
  memcpy(d->yte, lab + ntrain, (size_t)ntest * sizeof *d->yte);
  free(all);
  free(lab);
  return 0;
}

/* Trains run r (steps minibatches) and fills in its results; out holds one batch of
   outputs. 0, or 1 after a failure it has reported. */
static int train_one(run *r, const options *o, const dataset *d, const mpe_train_arch *arch,
                     const mpe_train_optim *opt, long steps, float *out)
{
  const long batch = o->batch, ntrain = o->ntrain, steps_per_epoch = (ntrain + batch - 1) / batch;
  snprintf(r->name, sizeof r->name, r->level == MPE_TRAIN_O0 ? "%s" : "%s %s %s", mpe_train_level_name(r->level),
           r->fmt, r->model);
  mpe_train_policy pol = { r->level, r->low, r->level == MPE_TRAIN_O0 ? NULL : r->model, NULL, 0 };
  mpe_train_net *net;
  int rc = mpe_train_net_alloc(&net, arch, &pol, opt);
  if (rc == MPE_EUNSUP) {
    r->unsupported = 1;
    return 0;
  }
  if (rc) {
    fprintf(stderr, "mlp_lab: %s: %s\n", r->name, mpe_strerror(rc));
    return 1;
  }
  r->ran = 1;
  r->loss = malloc((size_t)steps * sizeof *r->loss);
  double t0 = lab_now(), last = t0;
  fprintf(stderr, "mlp_lab: %s: %ld steps...\n", r->name, steps);
  for (long t = 0; t < steps; t++) {
    long i0 = (t % steps_per_epoch) * batch;
    int m = (int)(ntrain - i0 < batch ? ntrain - i0 : batch);
    mpe_train_step_info info;
    mpe_threads_fit();   /* a team of the cores free now: a busy core would stall the step */
    if ((rc = mpe_train_step(net, d->xtr + (size_t)i0 * o->dim, NULL, d->ytr + i0, m, &info))) {
      fprintf(stderr, "mlp_lab: %s step %ld: %s\n", r->name, t, mpe_strerror(rc));
      return 1;
    }
    r->loss[r->nloss++] = info.loss;
    r->updates += info.updates;
    r->lost += info.lost;
    r->skipped += (uint64_t)info.skipped;
    r->diverged |= info.nonfinite;
    if (lab_now() - last >= 5.0) {   /* a run takes tens of seconds: a line every 5 s on stderr */
      last = lab_now();
      fprintf(stderr, "mlp_lab: %s step %ld/%ld, %.0f s so far\n", r->name, t + 1, steps, last - t0);
    }
  }
  r->final_loss = r->loss[r->nloss - 1];
  r->accuracy = accuracy(net, d->xte, d->yte, (int)o->ntest, (int)o->dim, (int)batch, out);
  r->train_accuracy = accuracy(net, d->xtr, d->ytr, (int)ntrain, (int)o->dim, (int)batch, out);
  r->seconds = lab_now() - t0;
  r->final_scale = mpe_train_loss_scale(net);
  mpe_train_net_free(net);
  if (!o->json)
    fprintf(stderr, "mlp_lab: %-16s test accuracy %6.2f%%  (%.1f s)\n", r->name, 100 * r->accuracy, r->seconds);
  return 0;
}

/* one JSON document of the settings and every run */
static void print_json(const options *o, const run *R, int nr, long steps, double total)
{
  json_t *doc = json_object(), *runs = json_array();
  json_object_set_new(doc, "lab", json_string("mlp"));
  json_object_set_new(doc, "train", json_integer(o->ntrain));
  json_object_set_new(doc, "test", json_integer(o->ntest));
  json_object_set_new(doc, "dim", json_integer(o->dim));
  json_object_set_new(doc, "hidden", json_integer(o->hidden));
  json_object_set_new(doc, "batch", json_integer(o->batch));
  json_object_set_new(doc, "epochs", json_integer(o->epochs));
  json_object_set_new(doc, "steps", json_integer(steps));
  json_object_set_new(doc, "optim", json_string(o->optim));
  json_object_set_new(doc, "lr", json_real(o->lr));
  json_object_set_new(doc, "act", json_string(o->actname));
  json_object_set_new(doc, "seed", json_integer(o->seed));
  for (int q = 0; q < nr; q++) {
    const run *r = &R[q];
    json_t *j = json_object();
    json_object_set_new(j, "level", json_string(mpe_train_level_name(r->level)));
    json_object_set_new(j, "format", json_string(r->fmt));
    json_object_set_new(j, "model", r->level == MPE_TRAIN_O0 ? json_null() : json_string(r->model));
    json_object_set_new(j, "supported", json_boolean(!r->unsupported));
    if (r->ran) {
      json_t *curve = json_array();
      for (size_t t = 0; t < r->nloss; t++)
        json_array_append_new(curve, isfinite(r->loss[t]) ? json_real(r->loss[t]) : json_null());
      json_object_set_new(j, "final_loss", isfinite(r->final_loss) ? json_real(r->final_loss) : json_null());
      json_object_set_new(j, "test_accuracy", json_real(r->accuracy));
      json_object_set_new(j, "train_accuracy", json_real(r->train_accuracy));
      json_object_set_new(j, "lost_fraction", json_real(r->updates ? (double)r->lost / (double)r->updates : 0));
      json_object_set_new(j, "skipped", json_integer((json_int_t)r->skipped));
      json_object_set_new(j, "final_scale", json_real(r->final_scale));
      json_object_set_new(j, "diverged", json_boolean(r->diverged));
      json_object_set_new(j, "seconds", json_real(r->seconds));
      json_object_set_new(j, "loss", curve);
    }
    json_array_append_new(runs, j);
  }
  json_object_set_new(doc, "runs", runs);
  json_object_set_new(doc, "seconds", json_real(total));
  char *s = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  puts(s);
  free(s);
  json_decref(doc);
}

/* the settings and a row per run */
static void print_table(const options *o, const run *R, int nr, long steps, double total)
{
  printf("MLP lab (b): %ld-%ld-4 %s, softmax cross-entropy, %s lr %g, batch %ld, %ld epochs (%ld steps);\n"
         "4-class spirals, %ld train / %ld test, seed %ld\n\n",
         o->dim, o->hidden, o->actname, o->optim, o->lr, o->batch, o->epochs, steps, o->ntrain, o->ntest, o->seed);
  int mw = 6;   /* the model column fits the longest name (CPU models: "arm-bfdot-ebf16") */
  for (int q = 0; q < nr; q++)
    if ((int)strlen(R[q].model) > mw)
      mw = (int)strlen(R[q].model);
  printf("%-5s %-6s %-*s %11s %10s %10s %9s %8s %8s %9s\n", "level", "format", mw, "model", "final loss",
         "train acc", "test acc", "lost %", "skipped", "scale", "time [s]");
  for (int q = 0; q < nr; q++) {
    const run *r = &R[q];
    if (r->unsupported) {
      printf("%-5s %-6s %-*s   n/a: the %s has no %s tensor cores\n", mpe_train_level_name(r->level), r->fmt,
             mw, r->model, r->model, r->fmt);
      continue;
    }
    printf("%-5s %-6s %-*s %11.5g %9.2f%% %9.2f%% %9.4f %8llu %8g %9.2f%s\n", mpe_train_level_name(r->level),
           r->fmt, mw, r->model, r->final_loss, 100 * r->train_accuracy, 100 * r->accuracy,
           r->updates ? 100.0 * (double)r->lost / (double)r->updates : 0.0, (unsigned long long)r->skipped,
           r->final_scale, r->seconds, r->diverged ? "  diverged" : "");
  }
  printf("\nlost %%: weight updates u != 0 with w + u == w in the stored weights (FP32 master for\n"
         "O0-O2, the low format for O3). Total %.1f s.\n", total);
}

/* the loss curves of the runs that ran (16 at most) */
static int plot_runs(const char *plot, const run *R, int nr)
{
  const char *names[64];
  const double *ys[64];
  size_t ns[64], k = 0;
  for (int q = 0; q < nr && k < 16; q++)
    if (R[q].ran) {
      names[k] = R[q].name;
      ys[k] = R[q].loss;
      ns[k++] = R[q].nloss;
    }
  return lab_plot_curves(plot, "MLP lab: training loss", "cross-entropy", k, names, ys, ns, 1);
}

int main(int argc, char **argv)
{
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc >= 0)
    return rc;
  run R[1 + 3 * MAXLIST * MAXLIST];
  int nr = 0;
  memset(R, 0, sizeof R);
  if ((rc = plan_runs(&o, R, &nr)) != 0)
    return rc;
  if (!o.lr)
    o.lr = strcmp(o.optim, "adam") ? 0.05 : 0.003;
  dataset d;
  float *out = malloc((size_t)o.batch * 4 * sizeof *out);
  if (make_data(&o, &d) || !out)
    return 1;
  mpe_train_arch arch = { 2, { (int)o.dim, (int)o.hidden, 4 },
                          strcmp(o.actname, "gelu") ? MPE_TRAIN_RELU : MPE_TRAIN_GELU, MPE_TRAIN_XENT,
                          (int)o.batch, (uint64_t)o.seed };
  mpe_train_optim opt = { strcmp(o.optim, "adam") ? MPE_TRAIN_SGD : MPE_TRAIN_ADAM, (float)o.lr,
                          strcmp(o.optim, "adam") ? 0.9f : 0.0f, 0, 0, 0 };
  const long steps = (o.ntrain + o.batch - 1) / o.batch * o.epochs;
  double total0 = lab_now();
  for (int q = 0; q < nr; q++)
    if (train_one(&R[q], &o, &d, &arch, &opt, steps, out))
      return 1;
  double total = lab_now() - total0;
  if (o.json)
    print_json(&o, R, nr, steps, total);
  else
    print_table(&o, R, nr, steps, total);
  rc = o.plot ? plot_runs(o.plot, R, nr) : 0;
  for (int q = 0; q < nr; q++)
    free(R[q].loss);
  free(d.xtr);
  free(d.xte);
  free(d.ytr);
  free(d.yte);
  free(out);
  return rc;
}
