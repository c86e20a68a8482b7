/* A stand-alone driver for `mpanalyze update` (mpa_cmd_update) until the
   subcommand joins the table in analysis/mpanalyze/main.c:
   analysis/mpa-update --weights W --updates U [--format F] [--steps N] [--json]. */
#include <config.h>

int mpa_cmd_update(int argc, char **argv);

int main(int argc, char **argv)
{
  return mpa_cmd_update(argc, argv);
}
