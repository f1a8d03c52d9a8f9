// gpu-smoke-hold: allocates N MiB on the current CUDA device, touches it, says "ready <pid>", and
// sleeps, so scripts/gpu-smoke can see it as a GPU memory holder and measure reclaim after SIGKILL.
//
//   gpu-smoke-hold MIB [SECONDS]     (default 600 s; select the GPU with CUDA_VISIBLE_DEVICES)
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MIB [SECONDS]\n", argv[0]);
    return 2;
  }
  long mib = std::strtol(argv[1], nullptr, 10);
  long seconds = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 600;
  if (mib <= 0 || seconds <= 0) {
    std::fprintf(stderr, "gpu-smoke-hold: MIB and SECONDS must be positive\n");
    return 2;
  }
  size_t bytes = static_cast<size_t>(mib) << 20;
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "gpu-smoke-hold: cudaMalloc(%ld MiB): %s\n", mib, cudaGetErrorString(err));
    return 1;
  }
  err = cudaMemset(p, 0x5a, bytes);  // make the pages real
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "gpu-smoke-hold: cudaMemset: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  sleep(static_cast<unsigned>(seconds));
  cudaFree(p);
  return 0;
}
