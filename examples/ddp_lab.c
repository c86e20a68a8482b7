/* Lab: data-parallel training with the gradients all-reduced in a low format.
   The AMP lab's model (y = x W^T + b, x and the targets from N(0, 1), MSE, SGD)
   trained under O1 (FP16 GEMMs on an emulated tensor core, FP32 master
   weights, dynamic loss scaling) by N emulated workers: each step every worker
   runs the forward and backward pass on its shard of the batch, the workers'
   gradients are averaged by an all-reduce whose every addition is rounded to
   the chosen format (mpe_allreduce_f32, the order of the ring, tree or
   sequential algorithm), and the one averaged gradient updates the weights.
   The workers hold the same weights at every step, so one network serves
   them all. See examples/ddp_lab.md for what to look for. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpemu.h>
#include "lab_util.h"

#define MAX_FORMATS 4
#define MAX_WORKERS 64

typedef struct {
  const char *fmt;          /* the all-reduce format's name */
  int scaled;               /* dynamic loss scaling from 2^16, or a scale of 1 */
  double *loss;
  double seconds, final_scale;
  uint64_t updates, lost, skipped, reduced, zeroed;
  int diverged, err;
} run;

typedef struct {
  long workers, steps, n, din, dout, every;
  double lr, xscale;
  uint64_t seed;
  const char *model;
  mpe_allreduce_algo algo;
} config;

static void usage(FILE *o)
{
  fprintf(o, "usage: ddp_lab [options]\n"
             "  --workers N      data-parallel workers, emulated here (default 4; must divide --n)\n"
             "  --algo A         all-reduce order: ring, tree or naive (default ring)\n"
             "  --formats LIST   all-reduce formats, comma-separated (default fp32,fp16,bf16)\n"
             "  --model M        tensor-core model of the O1 GEMMs (default h100); the names with\n"
             "                   FP16 tensor cores:\n");
  lab_print_models(o, "                     ", (const mpe_type[]){ MPE_FP16 }, 1);
  fprintf(o, "  --steps N        training steps (default 60)\n"
             "  --n N --din D --dout D   global batch and sizes (default 64, 1024, 512)\n"
             "  --lr LR          SGD learning rate (default 1e-3)\n"
             "  --xscale S       inputs multiplied by S (default 0.01: gradients near FP16's subnormals)\n"
             "  --seed S         data and initial weights (default 1)\n"
             "  --plot FILE      loss curves of every run (.svg or .png)\n"
             "  --every K        a progress line every K steps (default 20; 0: none)\n");
}

/* One training run; r->err is an mpemu error code. */
static void train(const config *c, const float *x, const float *y, run *r)
{
  const size_t shard = (size_t)(c->n / c->workers);
  const int W = (int)c->workers;
  mpe_train_arch arch = { .nlayers = 1, .sizes = { (int)c->din, (int)c->dout }, .act = MPE_TRAIN_IDENTITY,
                    .loss = MPE_TRAIN_MSE, .batch = (int)shard, .seed = c->seed };
  mpe_train_policy pol = { .level = MPE_TRAIN_O1, .low = MPE_FP16, .model = c->model, .scaler = "pytorch",
                     .init_scale = r->scaled ? 65536.0 : 1.0 };
  mpe_train_optim opt = { .kind = MPE_TRAIN_SGD, .lr = (float)c->lr };
  mpe_allreduce_opts ao = { .algo = c->algo };
  if (strcmp(r->fmt, "fp32") != 0 && !(ao.format = mpe_format_lookup(r->fmt))) {
    r->err = MPE_ENOTFOUND;
    return;
  }
  mpe_train_net *net = NULL;
  const size_t nw = (size_t)c->din * c->dout, len = nw + (size_t)c->dout;
  float *g = malloc(sizeof(float) * len * (size_t)W), *out = malloc(sizeof(float) * len);
  const float *in[MAX_WORKERS];
  if (!g || !out || (r->err = mpe_train_net_alloc(&net, &arch, &pol, &opt))) {
    r->err = r->err ? r->err : MPE_ENOMEM;
    goto done;
  }
  for (int w = 0; w < W; w++)
    in[w] = g + (size_t)w * len;
  const double t0 = lab_now();
  for (long s = 0; s < c->steps && !r->err; s++) {
    mpe_train_step_info info;
    mpe_threads_fit();   /* a team of the cores free now: a busy core would stall the step */
    double loss = 0;
    float *gW, *gb;
    for (int w = 0; w < W && !r->err; w++) {
      float *gw = g + (size_t)w * len;
      if ((r->err = mpe_train_backward(net, x + (size_t)w * shard * c->din, y + (size_t)w * shard * c->dout,
                                 NULL, (int)shard, &info)) ||
          (r->err = mpe_train_grad(net, 0, &gW, &gb)))
        break;
      /* each worker divides its (loss-scaled) gradient by N before the sum, as
         PyTorch DDP's default and FP16-compression hooks do */
      for (size_t i = 0; i < nw; i++)
        gw[i] = gW[i] / (float)W;
      for (long i = 0; i < c->dout; i++)
        gw[nw + (size_t)i] = gb[i] / (float)W;
      loss += info.loss;
    }
    if (r->err || (r->err = mpe_allreduce_f32(out, in, (size_t)W, len, &ao, NULL)))
      break;
    for (size_t i = 0; i < len; i++) {
      double exact = 0;
      for (int w = 0; w < W; w++)
        exact += in[w][i];
      r->reduced += exact != 0;
      r->zeroed += exact != 0 && out[i] == 0;   /* a gradient the all-reduce flushed to zero */
    }
    memcpy(gW, out, sizeof(float) * nw);
    memcpy(gb, out + nw, sizeof(float) * (size_t)c->dout);
    info.loss = loss / W;
    if ((r->err = mpe_train_update(net, &info)))
      break;
    r->loss[s] = info.loss;
    r->updates += info.updates;
    r->lost += info.lost;
    r->skipped += (uint64_t)info.skipped;
    r->diverged |= info.nonfinite;
    if (c->every && (s + 1) % c->every == 0)
      fprintf(stderr, "ddp_lab: %-4s %-9s step %4ld  loss %.6g  scale %g\n", r->fmt,
              r->scaled ? "scaled" : "unscaled", s + 1, info.loss, info.scale);
  }
  r->seconds = lab_now() - t0;
  r->final_scale = mpe_train_loss_scale(net);
done:
  mpe_train_net_free(net);
  free(g);
  free(out);
}

/* Reads the options into *c, *formats and *plot: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, config *c, const char **formats, const char **plot)
{
  static const struct option lo[] = {
    { "workers", required_argument, 0, 'w' }, { "algo", required_argument, 0, 'a' },
    { "formats", required_argument, 0, 'f' }, { "model", required_argument, 0, 'm' },
    { "steps", required_argument, 0, 's' }, { "n", required_argument, 0, 'N' },
    { "din", required_argument, 0, 'I' }, { "dout", required_argument, 0, 'O' },
    { "lr", required_argument, 0, 'r' }, { "xscale", required_argument, 0, 'x' },
    { "seed", required_argument, 0, 'S' }, { "plot", required_argument, 0, 'p' },
    { "every", required_argument, 0, 'e' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  long seed = 1;
  int ch, li = 0;
  while ((ch = getopt_long(argc, argv, "h", lo, &li)) != -1) {
    int bad = 0;
    switch (ch) {
    case 'w': bad = lab_parse_long(optarg, 1, MAX_WORKERS, &c->workers); break;
    case 'a': {
      int a = mpe_allreduce_algo_lookup(optarg);
      bad = a < 0;
      if (!bad)
        c->algo = (mpe_allreduce_algo)a;
      break;
    }
    case 'f': *formats = optarg; break;
    case 'm': c->model = optarg; break;
    case 's': bad = lab_parse_long(optarg, 1, 1000000, &c->steps); break;
    case 'N': bad = lab_parse_long(optarg, 1, 1 << 16, &c->n); break;
    case 'I': bad = lab_parse_long(optarg, 1, 1 << 16, &c->din); break;
    case 'O': bad = lab_parse_long(optarg, 1, 1 << 16, &c->dout); break;
    case 'e': bad = lab_parse_long(optarg, 0, 1000000, &c->every); break;
    case 'S': bad = lab_parse_long(optarg, 0, 1L << 40, &seed); break;
    case 'r': bad = lab_parse_pos(optarg, &c->lr); break;
    case 'x': bad = lab_parse_pos(optarg, &c->xscale); break;
    case 'p': *plot = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    if (bad) {
      fprintf(stderr, "ddp_lab: bad value for --%s: '%s' (see --help)\n", lo[li].name, optarg);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "ddp_lab: unexpected argument '%s' (see --help)\n", argv[optind]);
    return 2;
  }
  if (c->n % c->workers) {
    fprintf(stderr, "ddp_lab: --workers %ld does not divide the batch --n %ld\n", c->workers, c->n);
    return 2;
  }
  c->seed = (uint64_t)seed;
  if (*plot && lab_plot_check("ddp_lab", *plot))
    return 2;
  return -1;
}

/* The comma-separated formats (copied into fbuf, fblen bytes) into fl[0..MAX_FORMATS):
   how many, or 0 with a message. */
static int split_formats(const char *formats, char *fbuf, size_t fblen, const char **fl)
{
  int nf = 0;
  if (strlen(formats) >= fblen) {
    fprintf(stderr, "ddp_lab: --formats is too long\n");
    return 0;
  }
  strcpy(fbuf, formats);
  for (char *t = strtok(fbuf, ","); t; t = strtok(NULL, ",")) {
    if (nf == MAX_FORMATS || (strcmp(t, "fp32") != 0 && !mpe_format_lookup(t))) {
      fprintf(stderr, "ddp_lab: --formats: '%s' is not a format (or more than %d given)\n", t, MAX_FORMATS);
      return 0;
    }
    fl[nf++] = t;
  }
  if (!nf)
    fprintf(stderr, "ddp_lab: --formats is empty\n");
  return nf;
}

/* The table of the runs, each against the scaled FP32 run */
static void print_table(const config *c, const run *runs, int nr)
{
  printf("data-parallel O1 training, %ld workers x %ld rows, %s all-reduce, %s GEMMs, %ld steps\n",
         c->workers, c->n / c->workers, mpe_allreduce_algo_name(c->algo), c->model, c->steps);
  printf("%-6s %-9s %12s %10s %8s %11s %12s %12s %8s\n", "reduce", "scaling", "final loss", "vs fp32",
         "skipped", "final scale", "grads zeroed", "updates lost", "time s");
  const run *ref = NULL;
  for (int i = 0; i < nr; i++)
    if (!strcmp(runs[i].fmt, "fp32") && runs[i].scaled)
      ref = &runs[i];
  for (int i = 0; i < nr; i++) {
    const run *r = &runs[i];
    double fin = r->loss[c->steps - 1];
    char vs[32] = "-";
    if (ref && ref != r)
      snprintf(vs, sizeof vs, "%+.2e", (fin - ref->loss[c->steps - 1]) / ref->loss[c->steps - 1]);
    printf("%-6s %-9s %12.6g %10s %8llu %11g %11.3f%% %11.3f%% %8.1f%s\n", r->fmt,
           r->scaled ? "dynamic" : "none", fin, vs, (unsigned long long)r->skipped, r->final_scale,
           r->reduced ? 100.0 * (double)r->zeroed / (double)r->reduced : 0.0,
           r->updates ? 100.0 * (double)r->lost / (double)r->updates : 0.0, r->seconds,
           r->diverged ? "  diverged" : "");
  }
  printf("grads zeroed: averaged gradient values that are non-zero in binary64 but 0 after the all-reduce;\n"
         "updates lost: weight updates u != 0 after which the FP32 master weight did not change.\n");
}

int main(int argc, char **argv)
{
  config c = { .workers = 4, .steps = 60, .n = 64, .din = 1024, .dout = 512, .every = 20,
               .lr = 1e-3, .xscale = 0.01, .seed = 1, .model = "h100", .algo = MPE_ALLREDUCE_RING };
  const char *formats = "fp32,fp16,bf16", *plot = NULL;
  int rc = parse_options(argc, argv, &c, &formats, &plot);
  if (rc >= 0)
    return rc;
  const char *fl[MAX_FORMATS];
  char fbuf[256];
  int nf = split_formats(formats, fbuf, sizeof fbuf, fl);
  if (!nf)
    return 2;

  float *x = malloc(sizeof(float) * (size_t)c.n * c.din), *y = malloc(sizeof(float) * (size_t)c.n * c.dout);
  run runs[2 * MAX_FORMATS];
  int nr = 0, status = 0;
  if (!x || !y) {
    fprintf(stderr, "ddp_lab: out of memory\n");
    return 2;
  }
  mpe_train_randn(x, (size_t)c.n * c.din, c.seed + 100);
  mpe_train_randn(y, (size_t)c.n * c.dout, c.seed + 200);
  for (size_t i = 0; i < (size_t)c.n * c.din; i++)
    x[i] = (float)(x[i] * c.xscale);
  for (int f = 0; f < nf; f++)
    for (int sc = 1; sc >= 0; sc--) {
      run *r = &runs[nr++];
      memset(r, 0, sizeof *r);
      r->fmt = fl[f];
      r->scaled = sc;
      r->loss = calloc((size_t)c.steps, sizeof(double));
      if (!r->loss)
        r->err = MPE_ENOMEM;
      else
        train(&c, x, y, r);
      if (r->err) {
        fprintf(stderr, "ddp_lab: %s all-reduce, %s: %s\n", r->fmt, sc ? "scaled" : "unscaled",
                mpe_strerror(r->err));
        status = 2;
        goto out;
      }
    }

  print_table(&c, runs, nr);
  if (plot) {
    const char *names[2 * MAX_FORMATS];
    const double *ys[2 * MAX_FORMATS];
    size_t ns[2 * MAX_FORMATS];
    char nbuf[2 * MAX_FORMATS][32];
    for (int i = 0; i < nr; i++) {
      snprintf(nbuf[i], sizeof nbuf[i], "%s %s", runs[i].fmt, runs[i].scaled ? "scaled" : "unscaled");
      names[i] = nbuf[i];
      ys[i] = runs[i].loss;
      ns[i] = (size_t)c.steps;
    }
    char title[128];
    snprintf(title, sizeof title, "ddp_lab: %ld workers, %s all-reduce", c.workers, mpe_allreduce_algo_name(c.algo));
    status = lab_plot_curves(plot, title, "loss", (size_t)nr, names, ys, ns, 1);
  }
out:
  for (int i = 0; i < nr; i++)
    free(runs[i].loss);
  free(x);
  free(y);
  return status;
}
