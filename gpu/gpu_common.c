/* The parts of the GPU path that need no device: names of the paths and the
   architecture -> CPU model table. Built with and without CUDA. */
#include "config.h"
#include "mpei.h"
#include "mpemu/gpu.h"

const char *mpe_gpu_path_name(mpe_gpu_path path)
{
  switch (path) {
  case MPE_GPU_PATH_MMA: return "mma";
  case MPE_GPU_PATH_CUBLASLT: return "cublaslt";
  case MPE_GPU_PATH_GEMMEX: return "gemmex";
  }
  return NULL;
}

const char *mpe_gpu_arch_model(int major, int minor)
{
  switch (major) {
  case 7: return minor == 0 ? "v100" : minor == 5 ? "t4" : NULL;
  case 8: return minor == 9 ? "ada" : (minor == 0 || minor == 6 || minor == 7) ? "a100" : NULL;
  case 9: return minor == 0 ? "h100" : NULL;
  case 10: return (minor == 0 || minor == 3) ? "b200" : NULL;
  case 12: return (minor == 0 || minor == 1) ? "rtx-pro-6000" : NULL;
  default: return NULL;
  }
}
