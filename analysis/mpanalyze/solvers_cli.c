/* A stand-in for mpanalyze's dispatcher while `refine` and `cg` live on their
   own branch: solvers_cli refine|cg [options]. */
#include <stdio.h>
#include <string.h>

int mpa_cmd_refine(int argc, char **argv);
int mpa_cmd_cg(int argc, char **argv);

int main(int argc, char **argv)
{
  if (argc >= 2 && !strcmp(argv[1], "refine"))
    return mpa_cmd_refine(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "cg"))
    return mpa_cmd_cg(argc - 1, argv + 1);
  fprintf(stderr, "usage: solvers_cli refine|cg [options] (see --help)\n");
  return 2;
}
