/* mpanalyze plots with PLplot's cairo drivers (svgcairo, pngcairo). Built
   without PLplot, --plot is refused with a clear message. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* memfd_create */
#endif
#include <config.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
/* PLplot reports no write error, so it draws into a memfd (no disk to fill);
   mpa_plot_end checks the picture is whole and copies it with checked writes
   to a temporary file beside the target, renamed over the target at the end. */
static int plot_fd = -1;

static int plot_target(const char *file)
{
  plot_fd = memfd_create("mpanalyze-plot", MFD_CLOEXEC);
  if (plot_fd < 0)
    return mpa_error(file, "cannot make the plot: %s", strerror(errno));
  char name[64];
  snprintf(name, sizeof name, "/proc/self/fd/%d", plot_fd);
  plsdev(driver_for(file));
  plsfnam(name);
  return 0;
}

/* PLplot's colour 0 map as every plot uses it */
static const int palette[MPA_PLOT_NCURVES][3] = { { 31, 119, 180 }, { 255, 127, 14 }, { 44, 160, 44 },
                                                  { 214, 39, 40 }, { 148, 103, 189 }, { 140, 86, 75 },
                                                  { 227, 119, 194 }, { 23, 190, 207 } };

int mpa_plot_open(const char *file)
{
  if (plot_target(file))
    return MPA_EXIT_INPUT;
  plspage(0, 0, 1000, 600, 0, 0);
  plscolbg(255, 255, 255);
  for (int i = 0; i < MPA_PLOT_NCURVES; i++)
    plscol0(MPA_PLOT_CURVE(i), palette[i][0], palette[i][1], palette[i][2]);
  plscol0(MPA_PLOT_INK, 0, 0, 0);
  plinit();
  return 0;
}

/* the picture ends as a whole one does: </svg>, or PNG's IEND chunk */
static int picture_whole(const char *file, const unsigned char *p, size_t n)
{
  static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
  if (!strcasecmp(driver_for(file), "pngcairo"))
    return n >= 20 && memcmp(p + n - 12, iend, 12) == 0;
  while (n && (p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\r'))
    n--;
  return n >= 6 && memcmp(p + n - 6, "</svg>", 6) == 0;
}

int mpa_plot_end(const char *file)
{
  plend();
  int fd = plot_fd, rc = MPA_EXIT_OK;
  plot_fd = -1;
  if (!file) {   /* given up: drop the picture */
    close(fd);
    return MPA_EXIT_OK;
  }
  struct stat st;
  unsigned char *p = NULL;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || !(p = malloc((size_t)st.st_size)) ||
      pread(fd, p, (size_t)st.st_size, 0) != st.st_size || !picture_whole(file, p, (size_t)st.st_size))
    rc = mpa_error(file, "the plot was not drawn completely; nothing written");
  else
    rc = mpa_write_file(file, p, (size_t)st.st_size);
  free(p);
  close(fd);
  return rc;
}

/* Text from files as PLplot text: its escape character # doubled, control
   characters and bytes that are not UTF-8 shown as '?' (PLplot warns about
   each one it cannot decode). */
static const char *plot_text(char *buf, size_t n, const char *src)
{
  char tmp[512];
  mpa_esc(tmp, sizeof tmp, src);   /* controls and bad bytes become \xNN */
  size_t o = 0;
  for (const char *t = tmp; *t && o + 2 < n; t++) {
    if (*t == '#')
      buf[o++] = '#';
    buf[o++] = *t;
  }
  buf[o] = '\0';
  return buf;
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
  if (mpa_plot_open(file))
    return MPA_EXIT_INPUT;
  uint64_t total = 0, mx = 0;
  for (size_t i = 0; i < h->n; i++) {
    total += h->counts[i];
    if (h->counts[i] > mx)
      mx = h->counts[i];
  }
  double xmin = h->n ? h->first - 2 : -30, xmax = h->n ? h->first + (double)h->n + 2 : 20;
  for (size_t k = 0; k < h->nmarks; k++) {   /* every format's limits are drawn, however far from the data */
    double lo = h->marks[k].min_sub;
    double hi = h->marks[k].max_end;
    if (lo - 2 < xmin) xmin = lo - 2;
    if (hi + 2 > xmax) xmax = hi + 2;
  }
  /* the axis: percent, linear or log10 (a single value in a million still shows) */
  double pmin = 100.0, pmax = total ? 100.0 * (double)mx / (double)total : 1;
  for (size_t i = 0; i < h->n; i++)
    if (h->counts[i] && 100.0 * (double)h->counts[i] / (double)total < pmin)
      pmin = 100.0 * (double)h->counts[i] / (double)total;
  double y0 = h->linear ? 0 : floor(log10(pmin)) - 0.5;
  double ymax = h->linear ? pmax * 1.25 : log10(pmax) + 0.6;
  if (!h->linear && y0 > -1)
    y0 = -1;
  plcol0(MPA_PLOT_INK);
  plschr(0, 0.8);
  plenv(xmin, xmax, y0, ymax, 0, h->linear ? 0 : 20);
  char title[600];
  pllab("binade  log#d2#u|x|", h->linear ? "% of values" : "% of values (log scale)", plot_text(title, sizeof title, h->title));
  plscol0(3, 110, 110, 110);
  for (size_t i = 0; i < h->n; i++) {
    PLFLT x[4], y[4];
    double v = total ? 100.0 * (double)h->counts[i] / (double)total : 0;
    if (!h->linear) {
      if (v <= 0)
        continue;
      v = log10(v);
    }
    x[0] = x[1] = h->first + (double)i;
    x[2] = x[3] = h->first + (double)i + 1;
    y[0] = y[3] = y0;
    y[1] = y[2] = v;
    plcol0(3);
    plfill(4, x, y);
  }
  /* each format as a bar at its own height: a line down at its smallest
     subnormal, smallest normal (Q formats: none) and the end of its largest
     binade, joined at the top, its name above the middle */
  for (size_t k = 0; k < h->nmarks; k++) {
    const mpa_mark *f = &h->marks[k];
    double lines[3] = { f->min_sub, f->min_normal, f->max_end };
    double ybar = y0 + (ymax - y0) * (0.93 - 0.075 * (double)k);
    format_colour(k);
    for (int j = 0; j < 3; j++)
      if (lines[j] >= xmin && lines[j] <= xmax && !(j == 1 && f->min_normal == f->min_sub))
        plline(2, (PLFLT[]){ lines[j], lines[j] }, (PLFLT[]){ y0, ybar });
    plline(2, (PLFLT[]){ f->min_sub, f->max_end }, (PLFLT[]){ ybar, ybar });
    char lab[64];
    snprintf(lab, sizeof lab, "%s", f->name);
    plptex(0.5 * (f->min_sub + f->max_end), ybar + (ymax - y0) * 0.012, 1, 0, 0.5, plot_text(title, sizeof title, lab));
  }
  if (h->nmarks) {
    plcol0(MPA_PLOT_INK);
    plmtex("t", 0.5, 1.0, 1.0, "each format: min subnormal, min normal, end of its largest binade");
  }
  return mpa_plot_end(file);
}

int mpa_plot_scale(const char *file, const char *title, const double *scale, const int *overflow, size_t n)
{
  if (mpa_plot_open(file))
    return MPA_EXIT_INPUT;
  PLFLT *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    mpa_plot_end(NULL);
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
  plcol0(MPA_PLOT_INK);
  plenv(-0.5, n ? (double)n - 0.5 : 1, lo - 1.5, hi + 1.5, 0, 0);
  char t[600];
  pllab("step", "log#d2#u scale", plot_text(t, sizeof t, title));
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
  return mpa_plot_end(file);
}
int mpa_plot_steps(const char *file, const char *title, const char *const *names, size_t nf,
                   const double *share, size_t n)
{
  /* log10 of percent; a share of 0 sits on the floor line */
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < nf * 3 * n; i++)
    if (share[i] > 0) {
      double v = log10(100 * share[i]);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (!(hi >= lo))
    lo = -3, hi = 0;
  double floor_y = floor(lo) - 1, top = (hi > 2 ? 2 : ceil(hi)) + 0.3;   /* 100 % at most */
  PLFLT *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    return mpa_error(NULL, "out of memory");
  }
  if (mpa_plot_open(file)) {
    free(x);
    free(y);
    return MPA_EXIT_INPUT;
  }
  plcol0(MPA_PLOT_INK);
  plschr(0, 0.8);
  plenv(-0.5, n > 1 ? (double)n - 0.5 : 1, floor_y - 0.3, top, 0, 20);
  char t[600];
  /* the title above two lines of key: the formats' colours, then the line styles */
  pllab("step (input file, in order)", "% of values (log scale; bottom line: none)", "");
  plmtex("t", 2.9, 0.5, 0.5, plot_text(t, sizeof t, title));
  static const char *kind[3] = { "underflow", "subnormal", "overflow" };
  for (size_t k = 0; k < nf; k++) {
    format_colour(k);
    for (int j = 0; j < 3; j++) {
      pllsty(j + 1);   /* solid: underflow, dashed: subnormal, dotted: overflow */
      for (size_t s = 0; s < n; s++) {
        double v = share[(k * 3 + (size_t)j) * n + s];
        x[s] = (double)s;
        y[s] = v > 0 ? log10(100 * v) : floor_y;
      }
      if (n > 1)
        plline((PLINT)n, x, y);
      plpoin((PLINT)n, x, y, j == 0 ? 4 : j == 1 ? 17 : 5);
    }
    pllsty(1);
    /* the names left to right along the top, in their colours */
    plmtex("t", 1.7, (double)k / (double)(nf > 8 ? nf : 8), 0, plot_text(t, sizeof t, names[k]));
  }
  plcol0(MPA_PLOT_INK);
  char key[128];
  snprintf(key, sizeof key, "solid, o: %s   dashed, dot: %s   dotted, x: %s", kind[0], kind[1], kind[2]);
  plmtex("t", 0.5, 1.0, 1.0, key);
  free(x);
  free(y);
  return mpa_plot_end(file);
}
#else
int mpa_plot_steps(const char *file, const char *title, const char *const *names, size_t nf,
                   const double *share, size_t n)
{
  (void)title; (void)names; (void)nf; (void)share; (void)n;
  return mpa_plot_check_name(file);
}

int mpa_plot_open(const char *file)
{
  return mpa_plot_check_name(file);
}

int mpa_plot_end(const char *file)
{
  return mpa_plot_check_name(file);
}

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
