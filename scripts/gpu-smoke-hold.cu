// gpu-smoke-hold: allocates N MiB on the current CUDA device, touches it, says "ready <pid>", and
// sleeps, so scripts/gpu-smoke can see it as a GPU memory holder and measure reclaim after SIGKILL.
// With STEP_MIB, STEP_MS and STEPS it then grows: every STEP_MS milliseconds it allocates and
// touches STEP_MIB more, STEPS times, saying "step <k> <total MiB>" after each (a leak in fast
// motion), and then sleeps out the rest of SECONDS. With GPU_SMOKE_HOLD_BUSY=1 in the environment it
// keeps the GPU's SMs busy (back-to-back spin kernels) instead of sleeping, so that tools see a
// holder that computes, next to one that only holds memory.
//
//   gpu-smoke-hold MIB [SECONDS [STEP_MIB STEP_MS STEPS]]   (default 600 s; GPU from CUDA_VISIBLE_DEVICES)
#include <cuda_runtime.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Allocates and touches `mib` MiB; returns false (after saying why) when the device refuses.
bool Hold(long mib) {
  size_t bytes = static_cast<size_t>(mib) << 20;
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "gpu-smoke-hold: cudaMalloc(%ld MiB): %s\n", mib, cudaGetErrorString(err));
    return false;
  }
  err = cudaMemset(p, 0x5a, bytes);  // make the pages real
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "gpu-smoke-hold: cudaMemset: %s\n", cudaGetErrorString(err));
    return false;
  }
  return true;  // never freed: the process's exit (or SIGKILL) gives it back
}

// Spins every thread until `cycles` SM clock cycles have passed.
__global__ void Spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

double NowSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3 && argc != 6) {
    std::fprintf(stderr, "usage: %s MIB [SECONDS [STEP_MIB STEP_MS STEPS]]\n", argv[0]);
    return 2;
  }
  long mib = std::strtol(argv[1], nullptr, 10);
  long seconds = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 600;
  long step_mib = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 0;
  long step_ms = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 0;
  long steps = argc > 5 ? std::strtol(argv[5], nullptr, 10) : 0;
  if (mib <= 0 || seconds <= 0 || step_mib < 0 || step_ms < 0 || steps < 0 || (steps > 0 && step_mib == 0)) {
    std::fprintf(stderr, "gpu-smoke-hold: MIB and SECONDS must be positive, STEP_MIB/STEP_MS/STEPS not negative\n");
    return 2;
  }
  double start = NowSeconds();
  if (!Hold(mib)) return 1;
  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  long total = mib;
  for (long k = 1; k <= steps; ++k) {
    usleep(static_cast<useconds_t>(step_ms) * 1000);
    if (!Hold(step_mib)) return 1;
    total += step_mib;
    std::printf("step %ld %ld\n", k, total);
    std::fflush(stdout);
  }
  const char* busy = std::getenv("GPU_SMOKE_HOLD_BUSY");
  if (busy != nullptr && busy[0] == '1') {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int blocks = sms > 0 ? sms * 2 : 1;
    while (NowSeconds() - start < static_cast<double>(seconds)) {
      // clang-format off
      Spin<<<blocks, 256>>>(100000000LL);  // ~50 ms at 2 GHz
      // clang-format on
      cudaError_t err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        std::fprintf(stderr, "gpu-smoke-hold: spin kernel: %s\n", cudaGetErrorString(err));
        return 1;
      }
    }
    return 0;
  }
  double left = static_cast<double>(seconds) - (NowSeconds() - start);
  if (left > 0) sleep(static_cast<unsigned>(left));
  return 0;
}
