// The SFP's random numbers (sim/core/sfp_random.h): Philox-4x32-10 against the known-answer
// vectors Random123 publishes (kat_vectors, philox4x32 with 10 rounds), and the value maps.
// tests/python/test_random.py checks compiled graphs against Inductor's CPU code bit for bit.
#include "../../sim/core/sfp_random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

namespace spyre::sim::random {
namespace {

using Words = std::array<uint32_t, 4>;

TEST(SfpRandom, PhiloxMatchesThePublishedKnownAnswers) {
  EXPECT_EQ(philox(Words{0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox(Words{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox(Words{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // (seed, offset) is counter (offset, 0, 0, 0) under key (seed, 0).
  EXPECT_EQ(philox(7u, 11u), philox(Words{11, 0, 0, 0}, {7, 0}));
}

TEST(SfpRandom, UniformIsInTheUnitIntervalAndNormalIsFinite) {
  double sum = 0, sum_sq = 0, zsum = 0, zsq = 0;
  std::set<float> distinct;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const float u = uniform(12345u, static_cast<uint32_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u, sum_sq += u * u;
    distinct.insert(u);
    const float z = normal(12345u, static_cast<uint32_t>(i));
    ASSERT_TRUE(std::isfinite(z));
    zsum += z, zsq += z * z;
  }
  // Means and variances within about 5 standard errors of U(0, 1) and N(0, 1).
  EXPECT_NEAR(sum / n, 0.5, 0.011);
  EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 1.0 / 12, 0.005);
  EXPECT_NEAR(zsum / n, 0.0, 0.036);
  EXPECT_NEAR(zsq / n, 1.0, 0.05);
  EXPECT_GT(distinct.size(), static_cast<size_t>(n * 0.99));
  // Another seed, another stream.
  EXPECT_NE(uniform(1u, 0u), uniform(2u, 0u));
}

TEST(SfpRandom, OperandsGiveTheirLow32Bits) {
  EXPECT_EQ(word(5.0), 5u);
  EXPECT_EQ(word(-1.0), 0xffffffffu);
  EXPECT_EQ(word(4294967296.0 + 3.0), 3u);
  EXPECT_EQ(word(7.9), 7u);
  EXPECT_EQ(word(std::numeric_limits<double>::quiet_NaN()), 0u);
  EXPECT_EQ(word(1e300), word(std::fmod(1e300, 4294967296.0)));
}

}  // namespace
}  // namespace spyre::sim::random
