/* Helpers shared by the labs (examples/amp_lab, examples/mlp_lab) and the
   training benchmark: loss-curve plots, timing, option parsing. Not installed. */
#ifndef MPE_TRAIN_LAB_H
#define MPE_TRAIN_LAB_H
#include <stddef.h>
#include <stdio.h>
#include <mpemu.h>

/* seconds from a monotonic clock */
double lab_now(void);
/* Option values: a whole decimal integer in [lo, hi], a finite number > 0.
   0 and *v set, or 1 (and *v untouched). */
int lab_parse_long(const char *s, long lo, long hi, long *v);
int lab_parse_pos(const char *s, double *v);
/* The names mpe_tc_model_name_at(3) lists that have a model for one of the
   types in[0..nin), comma-separated on o in lines of at most 80 columns, each
   line starting with indent. */
void lab_print_models(FILE *o, const char *indent, const mpe_type *in, int nin);
/* How many of the m rows of out (m x nclass scores) have their largest score
   (the first of equal ones) at the class in lab[0..m). */
int lab_count_correct(const float *out, const int *lab, int m, int nclass);
/* 1 when plots can be drawn (built with PLplot) */
int lab_plot_available(void);
/* 0 when `file` ends in .svg or .png and PLplot is there; else a message on stderr and 2 */
int lab_plot_check(const char *prog, const char *file);
/* One figure: series k is y[k][0..n[k]) against steps 1..n[k], named names[k];
   logy: log10 scale (non-positive and non-finite points are left out).
   Returns 0, or 2 with a message when the file cannot be written. */
int lab_plot_curves(const char *file, const char *title, const char *ylabel, size_t nseries,
                    const char *const *names, const double *const *y, const size_t *n, int logy);
#endif
