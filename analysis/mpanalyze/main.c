/* mpanalyze: the command-line face of libmpemu. The subcommands are rows of
   one table; `mpanalyze FILE...` (no subcommand) is `mpanalyze range FILE...`. */
#include <config.h>
#include <stdio.h>
#include <string.h>
#include "mpanalyze.h"

static const mpa_command commands[] = {
  { "range", mpa_cmd_range, "what overflows, underflows or turns subnormal per tensor and format; the loss scale to use" },
  { "scale", mpa_cmd_scale, "replay a dynamic loss scaler (or FP8 delayed scaling) over per-step gradient dumps" },
  { "refine", mpa_cmd_refine, "LU-IR / GMRES-IR with a low-precision tensor-core LU: convergence, fallback, kappa sweeps" },
  { "cg", mpa_cmd_cg, "mixed-precision CG with reliable updates on 16-bit sloppy storage" },
  { "update", mpa_cmd_update, "apply update dumps under low/master/kahan/sr strategies: lost updates and drift" },
  { "memory", mpa_cmd_memory, "per-GPU bytes of weights, gradients, optimizer state and activations under ZeRO" },
  { "order", mpa_cmd_order, "spread of sums when the order of additions is not fixed (atomicAdd, split-K)" },
};
#define NCMD (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
  fprintf(out, "usage: mpanalyze [COMMAND] [OPTIONS] FILE...\n"
               "       mpanalyze COMMAND --help\n\ncommands:\n");
  for (size_t i = 0; i < NCMD; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
  fprintf(out, "\nWithout a command, FILE... gets the range report. Every command takes\n"
               "--max-memory SIZE (e.g. 4G, 25%%; default half of physical memory). See mpanalyze(1).\n");
}

static int run(int argc, char **argv)
{
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
    usage(stdout);
    return mpa_close_stdout(MPA_EXIT_OK);   /* a write failure is exit 2, as for every report */
  }
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("mpanalyze (mpemu) %s\n", mpe_version_string());
    return mpa_close_stdout(MPA_EXIT_OK);
  }
  if (argc < 2) {
    usage(stderr);
    return MPA_EXIT_INPUT;
  }
  if (mpa_take_max_memory(&argc, argv))
    return MPA_EXIT_INPUT;
  if (argc < 2) {
    usage(stderr);
    return MPA_EXIT_INPUT;
  }
  for (size_t i = 0; i < NCMD; i++)
    if (!strcmp(argv[1], commands[i].name))
      return mpa_close_stdout(commands[i].run(argc - 1, argv + 1));
  /* no command: the default one sees the whole command line */
  argv[0] = (char *)commands[0].name;
  return mpa_close_stdout(commands[0].run(argc, argv));
}

/* under mpirun the range report, refine --cond-sweep and the scale replay are
   shared out among the ranks; any other command (and help) runs on rank 0 alone */
static int rank0_only(int argc, char **argv)
{
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help") ||
      !strcmp(argv[1], "--version"))
    return 1;
  for (size_t i = 1; i < NCMD; i++)
    if (!strcmp(argv[1], commands[i].name))
      return strcmp(argv[1], "refine") != 0 && strcmp(argv[1], "scale") != 0;   /* these share their work out */
  return 0;
}

int main(int argc, char **argv)
{
  mpa_mpi_init(&argc, &argv);
  int rc = MPA_EXIT_OK;
  if (mpa_mpi_rank() == 0 || !rank0_only(argc, argv))
    rc = run(argc, argv);
  mpa_mpi_finalize();
  return rc;
}
