// Fuzz target: any bytes as a long series of samples for the leak engine, with the steps and values
// no reader lets through (time going back, NaN, infinities, negative or astronomic bytes), holder
// departures and capacity changes, assessed every 1024 samples and at the end. Byte 0: capacity
// calls; byte 3: how many times the rest repeats (a few hours of samples from a short input); then
// 4 bytes per sample: the time step's code, a signed value step, and a byte of scale and specials.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "detection/leak_engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kSteps[16] = {0, 1e-6, 0.1, 1, 1, 1, 5, 10, 10, 60, 600, 3600, 1e5, -1, -1e6, 1e9};
  constexpr double kSpecial[8] = {kNaN, kInf, -1, 0, 1e30, -kInf, 1, 9e18};
  vw::detection::LeakEngine engine;
  if (data[0] & 1) engine.SetCapacity(80.0 * (1ULL << 30), (data[0] & 2) ? 512.0 * (1 << 20) : 0);
  if (data[0] & 4) engine.SetCapacity(data[1] * 1e9, data[2] * 1e8);
  double t = (data[0] & 8) ? 1.7e9 : 0;
  double bytes = 40.0 * (1ULL << 30);
  const size_t repeats = 1 + data[3] % 64;
  size_t samples = 0;
  for (size_t r = 0; r < repeats && samples <= 60000; ++r) {
    for (size_t i = 4; i + 4 <= size && samples <= 60000; i += 4) {
      const uint8_t step = data[i], b = data[i + 1], c = data[i + 2], e = data[i + 3];
      t += kSteps[step & 15] * (1 + (step >> 4));
      int16_t delta = 0;
      std::memcpy(&delta, &data[i + 1], sizeof delta);
      bytes += delta * std::ldexp(1.0, e & 15);
      engine.Add(t, (e & 0xf0) == 0xf0 ? kSpecial[(b ^ c) & 7] : bytes);
      if ((e & 0xf0) == 0xe0 && (c & 7) == 0) {
        engine.NoteDeparture(t - kSteps[b & 15], t, b * std::ldexp(1.0, 24), b,
                             (c & 8) ? std::optional<double>(t - 100) : std::nullopt);
      }
      if (++samples % 1024 == 0) (void)engine.Assess();
    }
    for (int j = 0; j < 60 && r + 1 < repeats; ++j) {  // an hour of a slow rise between repeats
      t += 60;
      engine.Add(t, bytes + j * 1e6 * (data[3] & 3));
    }
  }
  (void)engine.Assess();
  return 0;
}
