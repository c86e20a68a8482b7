/* mpanalyze: shared declarations. A subcommand is one row of the table in
   main.c: a name, a function with main()'s signature (argv[0] is the
   subcommand's name) and a one-line help. To add one, write
   int mpa_cmd_NAME(int argc, char **argv) in its own file, declare it here
   and add its row. Conventions every subcommand follows (mpanalyze(1)):
   its options are one mpa_opt table read by mpa_parse (which also prints
   --help from it); --json prints one JSON document on stdout through
   mpa_json_print, --plot FILE.svg|.png draws after mpa_plot_open, text
   tables go through mpa_table_row; -q silences the progress bar and notes;
   bad input prints one line "mpanalyze: FILE: problem" on stderr and
   returns MPA_EXIT_INPUT with nothing on stdout. */
#ifndef MPANALYZE_H
#define MPANALYZE_H
#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <jansson.h>
#include <mpemu.h>

/* 3: the experiment ran and its report is whole, but it did not reach its
   goal (singular matrix, no convergence, CG breakdown or iteration limit) */
enum { MPA_EXIT_OK = 0, MPA_EXIT_FAIL = 1, MPA_EXIT_INPUT = 2, MPA_EXIT_NUMERIC = 3 };

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} mpa_command;

int mpa_cmd_range(int argc, char **argv);
int mpa_cmd_scale(int argc, char **argv);
int mpa_cmd_refine(int argc, char **argv);   /* cmd_refine.c */
int mpa_cmd_cg(int argc, char **argv);       /* cmd_refine.c */
int mpa_cmd_update(int argc, char **argv);   /* cmd_update.c */
int mpa_cmd_memory(int argc, char **argv);   /* cmd_memory.c */
int mpa_cmd_order(int argc, char **argv);    /* cmd_order.c */

/* ---- options (common.c): every subcommand describes its options in one
   table, parsed by mpa_parse and printed by mpa_help. A bad value gives one
   line "mpanalyze: CMD: bad --NAME 'VALUE' (what it must be)" (an unknown
   word: "unknown --NAME 'VALUE' (the words)"), an unknown option or a
   missing value mpa_getopt's line; all exit MPA_EXIT_INPUT. */
typedef enum {
  MPA_FLAG,      /* int: set to 1 */
  MPA_INT,       /* int in [lo, hi] */
  MPA_LONG,      /* long in [lo, hi] */
  MPA_U64,       /* unsigned long long, decimal or 0x hex (010 is ten), at most hi (seeds) */
  MPA_DOUBLE,    /* double: a finite number in [lo, hi] (MPA_LO_OPEN, MPA_HI_OPEN: strict) */
  MPA_COUNT,     /* double: a count from 1 to 1e15, with an optional k, M, B (or G), T suffix */
  MPA_FORMAT,    /* const mpe_format *: a format name (mpe_format_lookup) */
  MPA_ENUM,      /* int: the index of the value in words (NULL-terminated) */
  MPA_ROUND,     /* mpe_round: rne, rna, rz, ru, rd, ro, sr, sr_eq */
  MPA_DTYPE,     /* mpe_io_opts: --dtype T or NAME=T (mpa_parse_dtype) */
  MPA_SHAPE,     /* mpe_io_opts: --shape D,D.. */
  MPA_KIND,      /* mpe_io_opts: --kind K */
  MPA_PATH_IN,   /* const char *: an input file */
  MPA_PLOT,      /* const char *: an output .svg or .png, checked as mpa_output_check does */
  MPA_STRING,    /* const char * */
  MPA_STRINGS,   /* const char **: repeatable, appended; count in *(size_t *)extra */
  MPA_CALL       /* int fn(const char *arg, void *field): 0, or -1 for "bad" */
} mpa_opt_kind;
#define MPA_LO_OPEN 1
#define MPA_HI_OPEN 2
#define MPA_PLAIN 4     /* MPA_DTYPE: a type only, no NAME=T rules */
#define MPA_WORD 8      /* MPA_CALL: the value is a word; a bad one is "unknown" */
typedef struct {
  const char *name;     /* long name without "--"; NULL ends the table */
  int key;              /* short letter, or 0 */
  mpa_opt_kind kind;
  void *field;          /* what the value sets, of the kind's type */
  double lo, hi;        /* MPA_INT, MPA_LONG, MPA_DOUBLE: the range; MPA_U64: hi */
  const char *arg;      /* the value's name in --help ("N", "FILE"); NULL for a flag */
  const char *help;     /* the --help text; a newline continues it under itself */
  const char *want;     /* what a value must be, for the error (NULL: said from lo, hi or the words) */
  const void *extra;    /* MPA_ENUM: const char *const words[]; MPA_STRINGS: size_t *count;
                           MPA_CALL: the function */
  int flags;            /* MPA_LO_OPEN, MPA_HI_OPEN */
} mpa_opt;
typedef int (*mpa_opt_fn)(const char *arg, void *field);
typedef struct {
  const char *name;     /* the subcommand */
  const char *usage;    /* the lines before the options, without the last newline */
  const char *footer;   /* the lines after them, or NULL */
  const mpa_opt *opts;
} mpa_cli;
/* Parse argv[1..] (getopt order: options and operands mixed; "--" ends the
   options); --help and -h are added to every table. Returns 0 with *first the
   index of the first operand; 1 when --help was printed (exit 0); or prints
   one line and returns MPA_EXIT_INPUT. An MPA_PLOT path is checked once all
   options are read (a .svg or .png name, PLplot built in, mpa_output_check). */
int mpa_parse(const mpa_cli *cli, int argc, char **argv, int *first);
/* the usage, each option's line(s) from the table, the footer */
void mpa_help(const mpa_cli *cli, FILE *out);
/* mpa_parse for a subcommand without operands ("mpanalyze CMD: unexpected
   argument 'X' (mpanalyze CMD --help)" for one): -1 to go on, else the exit
   status to return now (MPA_EXIT_OK after --help). */
int mpa_parse_no_operands(const mpa_cli *cli, int argc, char **argv);
#define MPA_OPT_JSON(p) { "json", 0, MPA_FLAG, (p), 0, 0, NULL, "one JSON document on stdout", NULL, NULL, 0 }
#define MPA_OPT_END { NULL, 0, MPA_FLAG, NULL, 0, 0, NULL, NULL, NULL, NULL, 0 }

/* ---- helpers (common.c) */
extern int mpa_quiet;
/* the subcommand mpa_parse is reading for (NULL before it): errors of option
   values name it */
extern const char *mpa_cmd_name;
/* "mpanalyze: WHERE: message" on stderr (WHERE may be NULL); returns MPA_EXIT_INPUT */
int mpa_error(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* str made safe for a terminal in buf (n bytes): C0/C1 control characters,
   DEL and bytes that are not UTF-8 become \xNN; cut to fit. Returns buf. */
const char *mpa_esc(char *buf, size_t n, const char *str);
/* "fp16,bf16" -> formats (at most max); prints the error itself */
int mpa_parse_formats(const char *list, const mpe_format **out, size_t max, size_t *n);
/* "512,1024" or "512x1024" */
int mpa_parse_shape(const char *s, mpe_io_opts *o);
int mpa_parse_kind(const char *s, mpe_io_opts *o);
int mpa_parse_int(const char *s, long lo, long hi, long *v);
/* a positive finite count with an optional k, M, B (or G), T suffix: 0 or -1 */
int mpa_parse_count(const char *s, double *v);
/* a finite number with an optional suffix of units[] (any case), times its
   multiplier: 0 or -1 */
typedef struct { const char *u; double m; } mpa_unit;
int mpa_parse_units(const char *s, const mpa_unit *units, size_t n, double *v);
/* open with a message naming the file on failure; members skipped (no
   floating-point data) are noted on stderr unless -q or mpa_skips_in_report */
int mpa_open(const char *path, const mpe_io_opts *o, mpe_io **f);
extern int mpa_skips_in_report;
/* --dtype T (raw files, untyped members) or --dtype NAME=T (NAME a glob or a
   member name; may be repeated: the rules go to o->rules, kept in a static
   table of MPA_MAX_RULES). 0, or prints and returns -1. */
#define MPA_MAX_RULES MPE_REPORT_MAX_RULES

/* Which --dtype NAME=TYPE rules named a member of the inputs (range, scale):
   mpa_rules_mark for every input opened, then mpa_rules_check once. A rule
   that names no member, or a glob whose members all have another width than
   TYPE (it would read none of them), is an error: the message said, -1. */
typedef mpe_report_rule_use mpa_rule_use;   /* mpe_report_rules_mark(3) */
void mpa_rules_mark(mpe_io *f, const mpe_io_opts *io, mpa_rule_use *u);
int mpa_rules_check(const mpe_io_opts *io, const mpa_rule_use *u);
int mpa_parse_dtype(const char *arg, mpe_io_opts *o);
/* a member name matches a --tensor or --dtype pattern: equal, or an fnmatch glob */
int mpa_name_match(const char *pattern, const char *name);
/* The inputs: each argument a file, a folder (its tensor files: .npy .npz
   .safetensors .pt .pth .bin .csv .txt .tsv .dat .raw, not hidden ones, not
   recursive) or a quoted glob; what mpanalyze expands is sorted naturally
   (step2 before step10), arguments keep their order. *paths (malloc'ed
   strings, free with mpa_free_inputs). 0, or prints and returns 2. */
int mpa_expand_inputs(int n, char **args, char ***paths, size_t *np);
void mpa_free_inputs(char **paths, size_t np);
/* natural order: runs of digits compare as numbers */
int mpa_natcmp(const char *a, const char *b);
/* getopt_long with mpanalyze's own messages: an unknown option or a missing
   argument prints "mpanalyze: CMD: ... (mpanalyze CMD --help)" and gives '?' */
int mpa_getopt(int argc, char **argv, const char *shortopts, const struct option *lo);
/* Stream tensor i of f into the range accumulators r[0..nr) (mpe_range_feed(3):
   values scaled by `scale` first when scale != 1, in binary64; *amax, when not
   NULL, raised to the largest |x| seen, NaN if a NaN is seen), with the
   progress bar. Returns 0 or prints and returns 2 (1: out of memory). */
int mpa_feed(mpe_io *f, size_t i, const char *path, mpe_range **r, size_t nr, double scale, double *amax);
/* The n values of the selected tensor of f, which come as `from` (MPE_FP32 or
   MPE_FP64: mpe_io_tensor's value_type), into *out (malloc'ed) as `to` values
   (MPE_FP32 or MPE_FP64; binary64 rounded to nearest into binary32). 0, or
   prints and returns 2 (1: out of memory) with *out NULL; f stays open. */
int mpa_read_values(mpe_io *f, const char *path, mpe_type from, mpe_type to, size_t n, void **out);
/* progress bar on stderr when it is a terminal and not -q */
void mpa_progress(const char *label, uint64_t done, uint64_t total);
void mpa_progress_end(void);
/* Write the JSON document to stdout (indented, keys in order, binary64 to 17
   digits): 0; MPA_EXIT_INPUT on a write error (mpa_close_stdout then says
   it); MPA_EXIT_FAIL, said, out of memory. Every subcommand's --json. */
int mpa_json_print(json_t *doc);
/* a binary64 as JSON: null when not finite */
json_t *mpa_json_num(double v);

/* ---- text tables (common.c): a table is an array of columns, each a head and
   a width (printf's: negative left-aligns, 0 leaves the cell as it is); a row
   is its cells, one space apart. A row may have fewer cells than the table.
   Cells are strings; mpa_cell prints a number into one of its own buffers. */
#define MPA_MAX_COLS 16
typedef struct { const char *head; int width; } mpa_col;
typedef struct { char s[64]; } mpa_cellbuf;
void mpa_table_head(FILE *out, const mpa_col *cols, size_t n);
void mpa_table_row(FILE *out, const mpa_col *cols, size_t n, ...);   /* n const char * cells */
const char *mpa_cell(mpa_cellbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- under mpirun (mpi.c): stand-ins returning rank 0 of 1 without MPI */
void mpa_mpi_init(int *argc, char ***argv);
void mpa_mpi_finalize(void);
int mpa_mpi_rank(void);
int mpa_mpi_size(void);
int mpa_mpi_max(int v);          /* the largest v over the ranks */
int mpa_mpi_sum_int(int *v, size_t n);   /* v = the sum over the ranks, on every rank */
int mpa_mpi_sum_double(double *v, size_t n);   /* the same for binary64 (exact for integers below 2^53) */
int mpa_mpi_send(const void *buf, size_t len, int to, int tag);
int mpa_mpi_recv(void **buf, size_t *len, int from, int tag);   /* *buf is malloc'ed */
/* ranks other than 0 print errors only while this is set (the errors only
   they can see: the data of the tensors they analyse) */
extern int mpa_err_local;

/* The memory budget: --max-memory SIZE (anywhere after the command; K, M,
   G, T binary units or a percentage of physical memory; default half of
   physical memory). mpa_take_max_memory removes the option from argv and
   sets mpa_max_memory; 0 or prints and returns 2. mpa_budget is called with
   what a step will allocate, computed from what the input holds, before it
   allocates: 0, or one line naming the limit and how to raise it and 2. */
extern uint64_t mpa_max_memory;
int mpa_take_max_memory(int *argc, char **argv);
int mpa_budget(const char *where, const char *what, uint64_t bytes);

/* Before the work starts: an output path is refused when it is "-", a
   symbolic link to nothing or a loop of links, not a regular file, or the same
   file as any argument naming an existing file (argv[0..argc)); the folder of
   the file it names (a link's target) must take a new file. 0 or prints and
   returns 2. */
int mpa_output_check(const char *out, int argc, char **argv);
/* Write data to a temporary file beside path (beside a symbolic link's
   target when path is a link, which stays), every write, fsync and close
   checked, then rename it over that file: 0, or prints and returns 2 leaving
   no partial file and any old file as it was. */
int mpa_write_file(const char *path, const void *data, size_t n);
/* Flush and close stdout; a write error gives one line and exit status 2,
   otherwise status is returned. */
int mpa_close_stdout(int status);

/* ---- plots (plot.c); MPA_EXIT_INPUT with a message when built without PLplot */
int mpa_plot_available(void);
int mpa_plot_check_name(const char *file);   /* .svg or .png */
/* Every plot starts here: the driver for the name (.svg, .png), a 1000 x 600
   page on white, colour MPA_PLOT_INK black (frame, labels) and colours
   MPA_PLOT_CURVE(0..7) one palette, plinit. mpa_plot_end runs plend, checks
   the picture is whole and writes it with mpa_write_file (file NULL: drop
   it). Both return 0 or print and return 2. */
#define MPA_PLOT_INK 15
#define MPA_PLOT_NCURVES 8
#define MPA_PLOT_CURVE(k) (1 + (k) % MPA_PLOT_NCURVES)
int mpa_plot_open(const char *file);
int mpa_plot_end(const char *file);
typedef struct {           /* a target's limits, drawn as vertical lines at these binades */
  const char *name;
  double min_sub, min_normal, max_end;   /* max_end: one past the max finite binade */
} mpa_mark;
typedef struct {
  const char *title;
  int first;                /* binade of counts[0] */
  const uint64_t *counts;
  size_t n;
  size_t nmarks;
  const mpa_mark *marks;
  int linear;               /* 1: a linear axis of percent; 0: log (the tails show) */
} mpa_hist_plot;
int mpa_plot_histogram(const char *file, const mpa_hist_plot *h);
int mpa_plot_scale(const char *file, const char *title, const double *scale, const int *overflow, size_t n);
/* shares (0..1) per step of values that underflow, turn subnormal, overflow:
   share[(k * 3 + j) * n + s] for format k (names[k]), kind j, step s; on a log axis */
int mpa_plot_steps(const char *file, const char *title, const char *const *names, size_t nf,
                   const double *share, size_t n);
#endif
