/* Lab (a): the classic AMP example under the opt levels O0-O3.
   y = x W^T + b with x (N x D_in) and the targets (N x D_out) drawn from N(0, 1),
   MSE loss, SGD with lr 1e-3, 500 steps, every GEMM on an emulated tensor core.
   See examples/amp_lab.md for what to look for. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <mpemu.h>
#include "lab_util.h"

#define TOLERANCE 1e-3   /* |L(O2) - L(O0)| / L(O0) at the last step */

typedef struct {
  int ran, err;
  double *loss;
  double seconds, final_scale;
  uint64_t updates, lost, skipped, grad_values, grad_zeros;
  int diverged;
} run;

static void usage(FILE *o)
{
  fprintf(o, "usage: amp_lab [options]\n"
             "  --levels L       comma-separated opt levels (default O0,O1,O2,O3)\n"
             "  --format F       fp16 or bf16 (default fp16)\n"
             "  --model M        tensor-core model (default h100); the names with FP16 or BF16\n"
             "                   tensor cores:\n");
  lab_print_models(o, "                     ", (const mpe_type[]){ MPE_FP16, MPE_BF16 }, 2);
  fprintf(o, "  --steps N        training steps (default 500)\n"
             "  --n N --din D --dout D   sizes (default 64, 1024, 512)\n"
             "  --lr LR          SGD learning rate (default 1e-3)\n"
             "  --seed S         data and initial weights (default 1)\n"
             "  --scaler P       loss-scaler preset for O1/O2 (default pytorch)\n"
             "  --init-scale S   initial loss scale for O1/O2 (default: the preset's, 2^16)\n"
             "  --json           one JSON document on stdout instead of the table\n"
             "  --plot FILE      loss curves of every level (.svg or .png)\n"
             "  --every K        print the losses every K steps (default 0: only the table)\n");
}

/* the command line */
typedef struct {
  const char *fname, *model, *plot, *scaler;
  long steps, N, Din, Dout, every, seed;
  double lr, init_scale;
  int json;
  mpe_type low;                    /* the type of fname */
  int want[MPE_TRAIN_NLEVELS];     /* the levels asked for */
} options;

/* The levels of a comma-separated list into o->want: 0, or 2 for an unknown one. */
static int want_levels(const char *levels, options *o)
{
  char *dup = strdup(levels), *save = NULL;
  for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int l = mpe_train_level_lookup(t);
    if (l < 0) {
      fprintf(stderr, "amp_lab: unknown level '%s' (O0, O1, O2, O3)\n", t);
      free(dup);
      return 2;
    }
    o->want[l] = 1;
  }
  free(dup);
  return 0;
}

/* Reads the options into *o: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, options *o)
{
  static const struct option lo[] = {
    { "levels", required_argument, 0, 'L' }, { "format", required_argument, 0, 'f' },
    { "model", required_argument, 0, 'm' }, { "steps", required_argument, 0, 's' },
    { "n", required_argument, 0, 'N' }, { "din", required_argument, 0, 'I' },
    { "dout", required_argument, 0, 'O' }, { "lr", required_argument, 0, 'r' },
    { "seed", required_argument, 0, 'S' }, { "scaler", required_argument, 0, 'c' },
    { "json", no_argument, 0, 'j' }, { "plot", required_argument, 0, 'p' },
    { "every", required_argument, 0, 'e' }, { "init-scale", required_argument, 0, 'i' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  const char *levels = "O0,O1,O2,O3";
  *o = (options){ .fname = "fp16", .model = "h100", .scaler = "pytorch", .steps = 500, .N = 64, .Din = 1024,
                  .Dout = 512, .seed = 1, .lr = 1e-3 };
  int c;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    int bad = 0;
    switch (c) {
    case 'L': levels = optarg; break;
    case 'f': o->fname = optarg; break;
    case 'm': o->model = optarg; break;
    case 's': bad = lab_parse_long(optarg, 1, 1000000, &o->steps); break;
    case 'N': bad = lab_parse_long(optarg, 1, 1 << 16, &o->N); break;
    case 'I': bad = lab_parse_long(optarg, 1, 1 << 16, &o->Din); break;
    case 'O': bad = lab_parse_long(optarg, 1, 1 << 16, &o->Dout); break;
    case 'e': bad = lab_parse_long(optarg, 0, 1000000, &o->every); break;
    case 'S': bad = lab_parse_long(optarg, 0, 1L << 40, &o->seed); break;
    case 'r': { char *e; o->lr = strtod(optarg, &e); bad = e == optarg || *e || !(o->lr > 0); break; }
    case 'c': o->scaler = optarg; break;
    case 'i': { char *e; o->init_scale = strtod(optarg, &e); bad = e == optarg || *e || !(o->init_scale > 0) || !isfinite(o->init_scale); break; }
    case 'j': o->json = 1; break;
    case 'p': o->plot = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    if (bad) {
      fprintf(stderr, "amp_lab: bad option value '%s'\n", optarg);
      return 2;
    }
  }
  const mpe_format *f = mpe_format_lookup(o->fname);
  if (!f || (mpe_format_of(MPE_FP16) != f && mpe_format_of(MPE_BF16) != f)) {
    fprintf(stderr, "amp_lab: --format must be fp16 or bf16\n");
    return 2;
  }
  o->low = f == mpe_format_of(MPE_FP16) ? MPE_FP16 : MPE_BF16;
  if (o->plot && lab_plot_check("amp_lab", o->plot))
    return 2;
  return want_levels(levels, o) ? 2 : -1;
}

/* Trains level l into r (o->steps full-batch steps on x, y). 0, or the exit status
   after a failure it has reported. */
static int train_level(run *r, int l, const options *o, const float *x, const float *y, const mpe_train_arch *arch,
                       const mpe_train_optim *opt)
{
  const char *lname = mpe_train_level_name((mpe_train_level)l);
  mpe_train_policy pol = { (mpe_train_level)l, o->low, o->model, o->scaler, o->init_scale };
  mpe_train_net *net;
  int rc = mpe_train_net_alloc(&net, arch, &pol, opt);
  if (rc) {
    if (rc == MPE_EUNSUP)
      fprintf(stderr, "amp_lab: the %s has no %s tensor cores\n", o->model, o->fname);
    else if (rc == MPE_ENOTFOUND)
      fprintf(stderr, "amp_lab: unknown --model '%s' or --scaler '%s'\n", o->model, o->scaler);
    else
      fprintf(stderr, "amp_lab: %s\n", mpe_strerror(rc));
    return 2;
  }
  r->ran = 1;
  r->loss = malloc((size_t)o->steps * sizeof *r->loss);
  double t0 = lab_now(), last = t0;
  for (long t = 0; t < o->steps; t++) {
    mpe_train_step_info info;
    mpe_threads_fit();   /* a team of the cores free now: a busy core would stall the step */
    if ((rc = mpe_train_step(net, x, y, NULL, (int)o->N, &info))) {
      fprintf(stderr, "amp_lab: %s step %ld: %s\n", lname, t, mpe_strerror(rc));
      return 1;
    }
    r->loss[t] = info.loss;
    r->updates += info.updates;
    r->lost += info.lost;
    r->skipped += (uint64_t)info.skipped;
    r->grad_values += info.grad_values;
    r->grad_zeros += info.grad_zeros;
    r->diverged |= info.nonfinite;
    if (o->every && !o->json && (t + 1) % o->every == 0)
      printf("%s step %5ld  loss %.6g  scale %g%s\n", lname, t + 1, info.loss, info.scale,
             info.skipped ? "  (skipped)" : "");
    /* a level takes tens of seconds: say where it is every 5 s (stderr, so tables stay clean) */
    if (lab_now() - last >= 5.0) {
      last = lab_now();
      fprintf(stderr, "amp_lab: %s step %ld/%ld, %.0f s so far\n", lname, t + 1, o->steps, last - t0);
    }
  }
  r->seconds = lab_now() - t0;
  fprintf(stderr, "amp_lab: %s done in %.1f s\n", lname, r->seconds);
  r->final_scale = mpe_train_loss_scale(net);
  mpe_train_net_free(net);
  return 0;
}

/* one JSON document of the settings and every level; rel: O2 against O0 (NaN: not both ran) */
static void print_json(const options *o, const run *R, double rel)
{
  const long steps = o->steps;
  json_t *doc = json_object(), *lv = json_object();
  json_object_set_new(doc, "lab", json_string("amp"));
  json_object_set_new(doc, "format", json_string(o->fname));
  json_object_set_new(doc, "model", json_string(o->model));
  json_object_set_new(doc, "n", json_integer(o->N));
  json_object_set_new(doc, "d_in", json_integer(o->Din));
  json_object_set_new(doc, "d_out", json_integer(o->Dout));
  json_object_set_new(doc, "lr", json_real(o->lr));
  json_object_set_new(doc, "steps", json_integer(steps));
  json_object_set_new(doc, "seed", json_integer(o->seed));
  for (int l = 0; l < MPE_TRAIN_NLEVELS; l++) {
    if (!R[l].ran)
      continue;
    const run *r = &R[l];
    json_t *j = json_object(), *curve = json_array();
    for (long t = 0; t < steps; t++)
      json_array_append_new(curve, isfinite(r->loss[t]) ? json_real(r->loss[t]) : json_null());
    json_object_set_new(j, "final_loss", isfinite(r->loss[steps - 1]) ? json_real(r->loss[steps - 1]) : json_null());
    json_object_set_new(j, "updates", json_integer((json_int_t)r->updates));
    json_object_set_new(j, "lost", json_integer((json_int_t)r->lost));
    json_object_set_new(j, "lost_fraction", json_real(r->updates ? (double)r->lost / (double)r->updates : 0));
    json_object_set_new(j, "skipped", json_integer((json_int_t)r->skipped));
    json_object_set_new(j, "final_scale", json_real(r->final_scale));
    json_object_set_new(j, "grad_zero_fraction",
                        json_real(r->grad_values ? (double)r->grad_zeros / (double)r->grad_values : 0));
    json_object_set_new(j, "diverged", json_boolean(r->diverged));
    json_object_set_new(j, "seconds", json_real(r->seconds));
    json_object_set_new(j, "loss", curve);
    json_object_set_new(lv, mpe_train_level_name((mpe_train_level)l), j);
  }
  json_object_set_new(doc, "levels", lv);
  if (isfinite(rel)) {
    json_object_set_new(doc, "o2_o0_rel_diff", json_real(rel));
    json_object_set_new(doc, "tolerance", json_real(TOLERANCE));
    json_object_set_new(doc, "o2_matches_o0", json_boolean(rel <= TOLERANCE));
  }
  char *s = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  puts(s);
  free(s);
  json_decref(doc);
}

/* the settings, a row per level, and what O2 and O3 show */
static void print_table(const options *o, const run *R, double rel)
{
  const long steps = o->steps;
  printf("AMP lab (a): Linear %ld->%ld, N=%ld, MSE, SGD lr %g, %ld steps; low format %s on %s tensor "
         "cores (O0: binary32), seed %ld\n\n", o->Din, o->Dout, o->N, o->lr, steps, o->fname, o->model, o->seed);
  printf("%-5s %13s %13s %16s %10s %8s %9s %11s %9s\n", "level", "first loss", "final loss", "lost updates",
         "fraction", "skipped", "scale", "grad zeros", "time [s]");
  for (int l = 0; l < MPE_TRAIN_NLEVELS; l++) {
    const run *r = &R[l];
    if (!r->ran)
      continue;
    printf("%-5s %13.6g %13.6g %16llu %10.4f %8llu %9g %10.2f%% %9.2f%s\n", mpe_train_level_name((mpe_train_level)l),
           r->loss[0], r->loss[steps - 1], (unsigned long long)r->lost,
           r->updates ? (double)r->lost / (double)r->updates : 0.0, (unsigned long long)r->skipped,
           r->final_scale, r->grad_values ? 100.0 * (double)r->grad_zeros / (double)r->grad_values : 0.0,
           r->seconds, r->diverged ? "  diverged" : "");
  }
  printf("\nlost updates: weight updates u != 0 with w + u == w in the stored weights (FP32 master\n"
         "for O0-O2, %s for O3); grad zeros: weight-gradient values that are exactly 0.\n", o->fname);
  if (isfinite(rel))
    printf("O2 vs O0: final losses differ by %.3g relative; tolerance %g: %s\n", rel, TOLERANCE,
           rel <= TOLERANCE ? "they agree" : "they DO NOT agree");
  if (R[MPE_TRAIN_O3].ran)
    printf("O3: %.2f%% of the weight updates were lost.\n",
           R[MPE_TRAIN_O3].updates ? 100.0 * (double)R[MPE_TRAIN_O3].lost / (double)R[MPE_TRAIN_O3].updates : 0.0);
}

/* the loss curves of the levels that ran */
static int plot_levels(const options *o, const run *R)
{
  const char *names[MPE_TRAIN_NLEVELS];
  const double *ys[MPE_TRAIN_NLEVELS];
  size_t ns[MPE_TRAIN_NLEVELS], k = 0;
  char title[160];
  for (int l = 0; l < MPE_TRAIN_NLEVELS; l++)
    if (R[l].ran) {
      names[k] = mpe_train_level_name((mpe_train_level)l);
      ys[k] = R[l].loss;
      ns[k++] = (size_t)o->steps;
    }
  snprintf(title, sizeof title, "AMP lab: Linear %ld-%ld, MSE, SGD, %s on %s", o->Din, o->Dout, o->fname, o->model);
  return lab_plot_curves(o->plot, title, "loss", k, names, ys, ns, 1);
}

int main(int argc, char **argv)
{
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc >= 0)
    return rc;
  const long N = o.N, Din = o.Din, Dout = o.Dout, steps = o.steps;
  float *x = malloc((size_t)N * Din * sizeof *x), *y = malloc((size_t)N * Dout * sizeof *y);
  if (!x || !y)
    return 1;
  mpe_train_randn(x, (size_t)N * Din, (uint64_t)o.seed * 2 + 1);
  mpe_train_randn(y, (size_t)N * Dout, (uint64_t)o.seed * 2 + 2);
  mpe_train_arch arch = { 1, { (int)Din, (int)Dout }, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, (int)N, (uint64_t)o.seed };
  mpe_train_optim opt = { MPE_TRAIN_SGD, (float)o.lr, 0, 0, 0, 0 };
  run R[MPE_TRAIN_NLEVELS];
  memset(R, 0, sizeof R);
  for (int l = 0; l < MPE_TRAIN_NLEVELS; l++)
    if (o.want[l] && (rc = train_level(&R[l], l, &o, x, y, &arch, &opt)) != 0)
      return rc;
  double rel = NAN;
  if (R[MPE_TRAIN_O0].ran && R[MPE_TRAIN_O2].ran)
    rel = fabs(R[MPE_TRAIN_O2].loss[steps - 1] - R[MPE_TRAIN_O0].loss[steps - 1]) / fabs(R[MPE_TRAIN_O0].loss[steps - 1]);
  if (o.json)
    print_json(&o, R, rel);
  else
    print_table(&o, R, rel);
  rc = o.plot ? plot_levels(&o, R) : 0;
  for (int l = 0; l < MPE_TRAIN_NLEVELS; l++)
    free(R[l].loss);
  free(x);
  free(y);
  return rc;
}
