/* Loss-curve plots for the labs with PLplot's cairo drivers (svgcairo,
   pngcairo); without PLplot, --plot is refused with a clear message. */
#ifdef HAVE_CONFIG_H
#include <config.h>   /* HAVE_PLPLOT in the tree; out of it, -DHAVE_PLPLOT with PLplot */
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#ifdef HAVE_PLPLOT
#include <plplot.h>
#endif
#include "lab_util.h"

double lab_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int lab_parse_long(const char *s, long lo, long hi, long *v)
{
  char *e;
  long x = strtol(s, &e, 10);
  if (e == s || *e || x < lo || x > hi)
    return 1;
  *v = x;
  return 0;
}

int lab_parse_pos(const char *s, double *v)
{
  char *e;
  double x = strtod(s, &e);
  if (e == s || *e || !(x > 0) || !isfinite(x))
    return 1;
  *v = x;
  return 0;
}

void lab_print_models(FILE *o, const char *indent, const mpe_type *in, int nin)
{
  size_t col = 0;
  const char *name;
  for (int i = 0; (name = mpe_tc_model_name_at(i)) != NULL; i++) {
    int fits = 0;
    for (int t = 0; t < nin && !fits; t++)
      fits = mpe_tc_model_get(name, in[t]) != NULL;
    if (!fits)
      continue;
    if (col && col + strlen(name) + 2 > 80) {
      fputs(",\n", o);
      col = 0;
    } else if (col) {
      fputs(", ", o);
      col += 2;
    }
    if (!col)
      col = (size_t)fprintf(o, "%s", indent);
    col += (size_t)fprintf(o, "%s", name);
  }
  if (col)
    fputc('\n', o);
}

int lab_count_correct(const float *out, const int *lab, int m, int nclass)
{
  int good = 0;
  for (int i = 0; i < m; i++) {
    int best = 0;
    for (int j = 1; j < nclass; j++)
      if (out[(size_t)i * nclass + j] > out[(size_t)i * nclass + best])
        best = j;
    good += best == lab[i];
  }
  return good;
}

int lab_plot_available(void)
{
#ifdef HAVE_PLPLOT
  return 1;
#else
  return 0;
#endif
}

static const char *driver_for(const char *file)
{
  const char *dot = strrchr(file, '.');
  if (dot && !strcasecmp(dot, ".svg"))
    return "svgcairo";
  if (dot && !strcasecmp(dot, ".png"))
    return "pngcairo";
  return NULL;
}

int lab_plot_check(const char *prog, const char *file)
{
  if (!lab_plot_available()) {
    fprintf(stderr, "%s: %s: --plot is not available: mpemu was built without PLplot "
                    "(install libplplot-dev, then configure again)\n", prog, file);
    return 2;
  }
  if (!driver_for(file)) {
    fprintf(stderr, "%s: %s: --plot needs a file name ending in .svg or .png\n", prog, file);
    return 2;
  }
  FILE *t = fopen(file, "ab");   /* find out now, not after the training */
  if (!t) {
    fprintf(stderr, "%s: %s: cannot write the plot\n", prog, file);
    return 2;
  }
  fclose(t);
  return 0;
}

int lab_plot_curves(const char *file, const char *title, const char *ylabel, size_t nseries,
                    const char *const *names, const double *const *y, const size_t *n, int logy)
{
#ifdef HAVE_PLPLOT
  static const int rgb[16][3] = {
    { 0, 0, 0 }, { 200, 30, 30 }, { 30, 90, 200 }, { 20, 140, 60 }, { 150, 60, 170 }, { 220, 130, 0 },
    { 0, 150, 160 }, { 120, 120, 120 }, { 240, 100, 160 }, { 120, 80, 20 }, { 100, 180, 240 },
    { 160, 200, 40 }, { 90, 0, 90 }, { 250, 190, 60 }, { 0, 90, 90 }, { 180, 180, 0 } };
  FILE *t = fopen(file, "wb");   /* PLplot does not report an unwritable file: check first */
  if (!t) {
    fprintf(stderr, "%s: cannot write the plot\n", file);
    return 2;
  }
  fclose(t);
  double xmax = 1, ymin = INFINITY, ymax = -INFINITY, lmin = INFINITY, lmax = -INFINITY;
  for (size_t k = 0; k < nseries && logy; k++)   /* less than a decade: a linear axis reads better */
    for (size_t i = 0; i < n[k]; i++)
      if (isfinite(y[k][i]) && y[k][i] > 0) {
        lmin = fmin(lmin, y[k][i]);
        lmax = fmax(lmax, y[k][i]);
      }
  if (logy && lmax < 10 * lmin)
    logy = 0;
  for (size_t k = 0; k < nseries; k++) {
    if ((double)n[k] > xmax)
      xmax = (double)n[k];
    for (size_t i = 0; i < n[k]; i++) {
      double v = y[k][i];
      if (!isfinite(v) || (logy && v <= 0))
        continue;
      v = logy ? log10(v) : v;
      if (v < ymin) ymin = v;
      if (v > ymax) ymax = v;
    }
  }
  if (!(ymin <= ymax)) {
    ymin = 0;
    ymax = 1;
  }
  if (ymax - ymin < 1e-6) {
    ymin -= 0.5;
    ymax += 0.5;
  }
  double pad = 0.05 * (ymax - ymin);
  plsdev(driver_for(file));
  plsfnam(file);
  plspage(0, 0, 1000, 600, 0, 0);
  plscolbg(255, 255, 255);
  plinit();
  plscol0(1, 0, 0, 0);
  plcol0(1);
  plschr(0, 0.8);
  plenv(1, xmax, ymin - pad, ymax + pad, 0, logy ? 20 : 0);
  pllab("step", ylabel, title);
  PLINT opt[16], lcol[16], lsty[16];
  PLFLT lwid[16];
  const char *text[16];
  size_t ns = nseries < 16 ? nseries : 16;
  for (size_t k = 0; k < ns; k++) {
    const int *c = rgb[k % 16];
    plscol0((PLINT)(2 + k), c[0], c[1], c[2]);
    plcol0((PLINT)(2 + k));
    pllsty((PLINT)(1 + k % 8 / 2));
    PLFLT *xs = malloc((n[k] + 1) * sizeof *xs), *ys = malloc((n[k] + 1) * sizeof *ys);
    if (!xs || !ys) {
      free(xs);
      free(ys);
      continue;
    }
    size_t m = 0;
    for (size_t i = 0; i < n[k]; i++) {   /* draw each finite run */
      double v = y[k][i];
      int ok = isfinite(v) && (!logy || v > 0);
      if (ok) {
        xs[m] = (PLFLT)(i + 1);
        ys[m++] = logy ? log10(v) : v;
      }
      if ((!ok || i + 1 == n[k]) && m) {
        if (m > 1)
          plline((PLINT)m, xs, ys);
        else
          plpoin(1, xs, ys, 1);
        m = 0;
      }
    }
    free(xs);
    free(ys);
    opt[k] = PL_LEGEND_LINE;
    lcol[k] = (PLINT)(2 + k);
    lsty[k] = (PLINT)(1 + k % 8 / 2);
    lwid[k] = 1;
    text[k] = names[k];
  }
  pllsty(1);
  PLFLT lw, lh;
  PLINT tcol[16];
  for (size_t k = 0; k < ns; k++)
    tcol[k] = 1;
  pllegend(&lw, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_TOP | PL_POSITION_RIGHT,
           0.02, 0.02, 0.1, 0, 1, 1, 0, 0, (PLINT)ns, opt, 1.0, 0.8, 2.0, 1.0, tcol, text,
           NULL, NULL, NULL, NULL, lcol, lsty, lwid, NULL, NULL, NULL, NULL);
  plend();
  return 0;
#else
  (void)title; (void)ylabel; (void)nseries; (void)names; (void)y; (void)n; (void)logy;
  fprintf(stderr, "%s: --plot is not available: mpemu was built without PLplot\n", file);
  return 2;
#endif
}
