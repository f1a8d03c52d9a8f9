// A system clock that someone steps, for the e2e tests: LD_PRELOADed into `vramwatch`, this
// clock_gettime adds to CLOCK_REALTIME the whole seconds written in the file that
// VRAMWATCH_TEST_CLOCK_STEP_FILE names (read at each call; 0 when it is absent or unreadable), as
// NTP correcting a wrong clock or someone running `date` would. Every other clock passes through.
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

extern "C" int clock_gettime(clockid_t id, struct timespec* ts) {
  using Fn = int (*)(clockid_t, struct timespec*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "clock_gettime"));
  const int rc = real(id, ts);
  if (rc != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE)) return rc;
  const char* path = std::getenv("VRAMWATCH_TEST_CLOCK_STEP_FILE");
  if (path == nullptr) return rc;
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return rc;
  long long step = 0;
  if (std::fscanf(f, "%lld", &step) != 1) step = 0;
  std::fclose(f);
  ts->tv_sec += static_cast<time_t>(step);
  return rc;
}
