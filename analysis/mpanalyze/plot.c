/* mpanalyze plots with PLplot's cairo drivers (svgcairo, pngcairo). Built
   without PLplot, --plot is refused with a clear message. */
#include <config.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "mpanalyze.h"
#ifdef HAVE_PLPLOT
#include <plplot.h>
#endif

int mpa_plot_available(void)
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

int mpa_plot_check_name(const char *file)
{
  if (!mpa_plot_available())
    return mpa_error(file, "--plot is not available: mpemu was built without PLplot "
                           "(install libplplot-dev and plplot-driver-cairo, then configure again)");
  if (!driver_for(file))
    return mpa_error(file, "--plot needs a file name ending in .svg or .png");
  return 0;
}

#ifdef HAVE_PLPLOT
static int plot_begin(const char *file)
{
  FILE *t = fopen(file, "wb");   /* PLplot does not report an unwritable file: check first */
  if (!t)
    return mpa_error(file, "cannot write the plot");
  fclose(t);
  plsdev(driver_for(file));
  plsfnam(file);
  plspage(0, 0, 1000, 600, 0, 0);
  plscolbg(255, 255, 255);
  plinit();
  plscol0(1, 0, 0, 0);
  return 0;
}

/* distinct colours for the format marks */
static void format_colour(size_t k)
{
  static const int rgb[][3] = { { 200, 30, 30 }, { 30, 90, 200 }, { 20, 140, 60 }, { 150, 60, 170 },
                                { 220, 130, 0 }, { 0, 150, 160 } };
  const int *c = rgb[k % 6];
  plscol0(2, c[0], c[1], c[2]);
  plcol0(2);
}

int mpa_plot_histogram(const char *file, const mpa_hist_plot *h)
{
  if (plot_begin(file))
    return MPA_EXIT_INPUT;
  uint64_t total = 0, mx = 0;
  for (size_t i = 0; i < h->n; i++) {
    total += h->counts[i];
    if (h->counts[i] > mx)
      mx = h->counts[i];
  }
  double xmin = h->n ? h->first - 2 : -30, xmax = h->n ? h->first + (double)h->n + 2 : 20;
  for (size_t k = 0; k < h->nformats; k++) {   /* show the format limits near the data */
    double lo = mpe_format_emin(h->formats[k]) - mpe_format_precision(h->formats[k]) + 1;
    double hi = mpe_format_emax(h->formats[k]) + 1;
    if (lo < xmin && lo > xmin - 40) xmin = lo - 2;
    if (hi > xmax && hi < xmax + 40) xmax = hi + 2;
  }
  double ymax = total ? 100.0 * (double)mx / (double)total * 1.25 : 1;
  plcol0(1);
  plschr(0, 0.8);
  plenv(xmin, xmax, 0, ymax, 0, 0);
  pllab("binade  log#d2#u|x|", "% of values", h->title);
  plscol0(3, 110, 110, 110);
  for (size_t i = 0; i < h->n; i++) {
    PLFLT x[4], y[4];
    double v = total ? 100.0 * (double)h->counts[i] / (double)total : 0;
    x[0] = x[1] = h->first + (double)i;
    x[2] = x[3] = h->first + (double)i + 1;
    y[0] = y[3] = 0;
    y[1] = y[2] = v;
    plcol0(3);
    plfill(4, x, y);
  }
  for (size_t k = 0; k < h->nformats; k++) {
    const mpe_format *f = h->formats[k];
    double lines[3] = { mpe_format_emin(f) - mpe_format_precision(f) + 1, mpe_format_emin(f), mpe_format_emax(f) + 1 };
    static const char *what[3] = { "min sub", "min normal", "max" };
    format_colour(k);
    for (int j = 0; j < 3; j++) {
      if (lines[j] < xmin || lines[j] > xmax)
        continue;
      double ylab = ymax * (0.97 - 0.045 * (double)(3 * k + (size_t)j));   /* stagger the labels */
      plline(2, (PLFLT[]){ lines[j], lines[j] }, (PLFLT[]){ 0, ylab });
      char lab[64];
      snprintf(lab, sizeof lab, "%s %s", mpe_format_name(f), what[j]);
      plptex(lines[j], ylab, 1, 0, j == 2 ? 1.02 : -0.02, lab);
    }
  }
  plend();
  return 0;
}

int mpa_plot_scale(const char *file, const char *title, const double *scale, const int *overflow, size_t n)
{
  if (plot_begin(file))
    return MPA_EXIT_INPUT;
  PLFLT *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    plend();
    return mpa_error(NULL, "out of memory");
  }
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    x[i] = (double)i;
    y[i] = scale[i] > 0 ? log2(scale[i]) : -1100;
    if (y[i] < lo) lo = y[i];
    if (y[i] > hi) hi = y[i];
  }
  if (n == 0)
    lo = 0, hi = 1;
  plcol0(1);
  plenv(-0.5, n ? (double)n - 0.5 : 1, lo - 1.5, hi + 1.5, 0, 0);
  pllab("step", "log#d2#u scale", title);
  plscol0(3, 30, 90, 200);
  plcol0(3);
  if (n > 1)
    plline((PLINT)n, x, y);
  plscol0(2, 200, 30, 30);
  plcol0(2);
  for (size_t i = 0; i < n; i++)
    if (overflow[i])
      plpoin(1, &x[i], &y[i], 5);     /* x: an overflow (skipped step) */
  free(x);
  free(y);
  plend();
  return 0;
}
#else
int mpa_plot_histogram(const char *file, const mpa_hist_plot *h)
{
  (void)h;
  return mpa_plot_check_name(file);
}

int mpa_plot_scale(const char *file, const char *title, const double *scale, const int *overflow, size_t n)
{
  (void)title; (void)scale; (void)overflow; (void)n;
  return mpa_plot_check_name(file);
}
#endif
