// Philox-4x32-10 (sfp_random.h). The round function and constants are the published ones
// (Salmon et al., SC'11, section 4.2): two 32x32->64 multiplies per round, and a Weyl
// sequence added to the key between rounds.
#include "sfp_random.h"

#include <cmath>

namespace spyre::sim::random {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u;   // multiplier of counter word 0
constexpr uint32_t kMul1 = 0xCD9E8D57u;   // multiplier of counter word 2
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio: key word 0's increment
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1: key word 1's increment
constexpr int kRounds = 10;

// 2^-31 rounded so that (2^31 - 1) times it stays below 1 in float32.
constexpr float kUnitScale = 4.6566127342e-10f;

float unit(uint32_t w) { return static_cast<float>(w & 0x7FFFFFFFu) * kUnitScale; }

}  // namespace

std::array<uint32_t, 4> philox(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) k0 += kWeyl0, k1 += kWeyl1;
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
  }
  return c;
}

std::array<uint32_t, 4> philox(uint32_t seed, uint32_t offset) {
  return philox({offset, 0, 0, 0}, {seed, 0});
}

float uniform(uint32_t seed, uint32_t offset) { return unit(philox(seed, offset)[0]); }

float normal(uint32_t seed, uint32_t offset) {
  const auto w = philox(seed, offset);
  // 1 - u lies in (0, 1]: the logarithm is finite. The logarithm is float32's, as PyTorch's.
  const float u1 = 1.0f - unit(w[0]);
  const float u2 = 1.0f - unit(w[1]);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

uint32_t word(double v) {
  if (!std::isfinite(v)) return 0;
  double m = std::fmod(std::trunc(v), 4294967296.0);  // the low 32 bits, two's complement
  if (m < 0) m += 4294967296.0;
  return static_cast<uint32_t>(m);
}

}  // namespace spyre::sim::random
