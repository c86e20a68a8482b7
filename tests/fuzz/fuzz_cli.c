/* libFuzzer target for mpanalyze's main path: `mpanalyze range` (the default
   command) on one file, exactly as the tool runs it, report written and all.
   Byte 0 of the input picks the reader (--kind) and the options, the rest is
   the file (an in-memory file opened by path). Built by run.sh (kind `cli`)
   against a clang build of the library and the tool's objects; any exit
   status is fine, crashes, leaks and sanitizer reports are not. */
#include "fuzz_memfd.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpa_cmd_range(int argc, char **argv);
extern int mpa_quiet;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  /* the report goes nowhere; libFuzzer's own messages are on stderr */
  if (!freopen("/dev/null", "w", stdout))
    abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *kinds[] = { "npy", "npz", "safetensors", "text", "pt", "raw" };
  static const char *formats[] = { "fp16,bf16,e4m3,e5m2", "fp16,q8,fx16", "e4m3,e5m2,q14", "bf16,fx16" };
  if (size < 1)
    return 0;
  unsigned sel = data[0];
  char path[64];
  int fd = fuzz_memfd(data + 1, size - 1, path);
  if (fd < 0)
    return 0;
  char *argv[18];
  int argc = 0;
  argv[argc++] = "range";
  argv[argc++] = path;
  argv[argc++] = "-q";
  /* a few bytes can declare a broadcast view of 2^30 values (fuzz_read.h): bounded as a user would */
  argv[argc++] = "--max-values";
  argv[argc++] = "1048576";
  argv[argc++] = "--kind";
  argv[argc++] = (char *)kinds[sel % 6];
  if (sel % 6 == 5) {   /* raw needs a dtype */
    argv[argc++] = "--dtype";
    argv[argc++] = sel & 0x80 ? "bf16" : "e4m3";
  }
  argv[argc++] = "-f";
  argv[argc++] = (char *)formats[(sel / 6) % 4];
  if (sel & 0x40)
    argv[argc++] = "--json";
  if (sel & 0x20) {
    argv[argc++] = "--fx-block";
    argv[argc++] = "7";
  }
  argv[argc] = NULL;
  mpa_quiet = 1;
  mpa_cmd_range(argc, argv);
  fflush(stdout);
  clearerr(stdout);
  return 0;
}
