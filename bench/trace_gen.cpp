// trace-gen: writes a synthetic `nvidia-smi --query-gpu=timestamp,index,uuid,memory.used,memory.total,
// utilization.gpu --format=csv -l 1` capture of 8 GPUs until the file reaches the requested size.
//
//   trace-gen OUT_FILE SIZE_MB
//
// Memory on each GPU follows a slow leak with noise, so a reader has real numbers to parse.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/time.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: trace-gen OUT_FILE SIZE_MB\n");
    return 2;
  }
  const uint64_t target = static_cast<uint64_t>(std::atof(argv[2]) * 1e6);
  std::FILE* f = std::fopen(argv[1], "w");
  if (f == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  std::string buf;
  buf.reserve(1 << 22);
  buf += "timestamp, index, uuid, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n";
  uint64_t written = 0;
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  const double start = 1784016758.0;  // 2026-07-14T08:12:38
  for (uint64_t sec = 0; written + buf.size() < target; ++sec) {
    std::string iso = vw::FormatIso8601(start + static_cast<double>(sec), false);  // 2026-07-14T08:12:38
    iso[4] = '/';
    iso[7] = '/';
    iso[10] = ' ';
    for (int gpu = 0; gpu < 8; ++gpu) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      const uint64_t used = 20000 + static_cast<uint64_t>(gpu) * 1000 + sec / 60 + rng % 64;
      const uint64_t util = rng % 101;
      fmt::format_to(std::back_inserter(buf),
                     "{}.{:03d}, {}, GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f{:02d}, {} MiB, 81559 MiB, {} %\n", iso,
                     100 + gpu * 3, gpu, gpu, used, util);
    }
    if (buf.size() > (1 << 21)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      written += buf.size();
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
  return 0;
}
