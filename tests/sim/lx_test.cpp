// LX banks (bank demand, bookings, conflicts between units) and 4-D DMA descriptors. Exact
// cycles with the arithmetic in comments (16 banks of 128 B; bank of address a = (a/128) % 16).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "sim_test_util.h"
#include "spyre/sim/lx.h"

namespace spyre::sim {
namespace {

using test::busy;
using test::program;
using test::run;

arch::ArchConfig config(int cores = 4) {
  arch::ArchConfig cfg = test::config(cores);
  cfg.dram_impl = "fifo";  // the DMA arithmetic below is the fifo model's
  return cfg;
}

TEST(Lx, DemandCountsChunksPerBank) {
  Lx lx(config());
  BankCounts d(16, 0);
  lx.demand({0, 4096}, d);  // 32 chunks over 16 banks: 2 each
  for (uint64_t v : d) EXPECT_EQ(v, 2u);
  std::fill(d.begin(), d.end(), 0);
  lx.demand({64, 128, 8, 2048, 3}, d);  // each row straddles banks 0 and 1; 8 rows, 3 times
  EXPECT_EQ(d[0], 24u);
  EXPECT_EQ(d[1], 24u);
  EXPECT_EQ(d[2], 0u);
  std::fill(d.begin(), d.end(), 0);
  lx.demand({0, 4, 16, 4}, d);  // 16 fp32 with a 4-byte row stride coalesce into one chunk
  EXPECT_EQ(d[0], 1u);
}

// demand() remembers region shapes by base and stride modulo banks x chunk: a warm LX, which
// has seen thousands of shapes (slots reused, bases a whole number of spans apart), counts
// every region as a fresh one does, and as a plain walk over its rows' chunks does.
TEST(Lx, RememberedDemandEqualsAFreshCount) {
  Lx warm(config());
  const int64_t span = 16 * 128;
  uint64_t x = 12345;
  auto next = [&x](int64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(n));
  };
  for (int i = 0; i < 5000; ++i) {
    // Few values per field, so that shapes repeat and differ in one field only.
    const int64_t offsets[] = {0, 64, 128, 1000, 2047}, bytes[] = {64, 128, 300, 2048};
    const int64_t rows[] = {1, 4, 16, 33}, strides[] = {0, 96, 128, 256, 1536, 2048, 4160, -256};
    const LxRegion r{(2 + next(4)) * span + offsets[next(5)], bytes[next(4)], rows[next(4)],
                     strides[next(8)], 1 + next(2)};
    BankCounts got(16, 0), want(16, 0), walk(16, 0);
    warm.demand(r, got);
    Lx(config()).demand(r, want);
    ASSERT_EQ(got, want) << "region " << i;
    if (std::abs(r.row_stride) < 128 && r.rows > 1) continue;  // coalesced: checked above
    for (int64_t row = 0; row < r.rows; ++row) {
      const int64_t a = r.base + row * r.row_stride;
      if (a < 0) break;
      for (int64_t c = a / 128; c <= (a + r.row_bytes - 1) / 128; ++c)
        walk[static_cast<size_t>(c % 16)] += static_cast<uint64_t>(r.times);
    }
    if (r.base + (r.rows - 1) * r.row_stride >= 0) ASSERT_EQ(got, walk) << "region " << i;
  }
}

TEST(Lx, ConflictBetweenTwoUnitsStallsTheLaterBooking) {
  // Unit A books 8 accesses on bank 0 over [0, 16): rate 0.5, ends 16.
  // Unit B books 8 accesses on bank 0 over [4, 12): rate 1, gets 1 - 0.5 = 0.5 while A runs:
  //   6 by 16, the other 2 at rate 1: f = 18 > 12: stall 6.
  Lx lx(config());
  EXPECT_EQ(lx.access(0, 16, {{0, 128, 8, 2048}}, 0), 16u);
  EXPECT_EQ(lx.access(4, 8, {{16384, 128, 8, 2048}}, 4), 18u);
  // A different bank does not conflict.
  EXPECT_EQ(lx.access(4, 8, {{128, 128, 8, 2048}}, 4), 12u);
  auto s = lx.stats();
  EXPECT_EQ(s[0]["accesses"].get<uint64_t>(), 16u);
  EXPECT_EQ(s[0]["conflict_stall_cycles"].get<uint64_t>(), 6u);
  EXPECT_EQ(s[1]["conflict_stall_cycles"].get<uint64_t>(), 0u);
  // One bank serves one access per cycle: 8 accesses in a 4-cycle window take 8.
  Lx fresh(config());
  EXPECT_EQ(fresh.access(0, 4, {{0, 128, 8, 2048}}, 0), 8u);
}

TEST(Lx, EachBankOfAnEvenAccessFinishesByItsOwnBookings) {
  // One earlier booking on bank b alone (8 accesses over [0, 16), rate 0.5), then an access of
  // 8 accesses on every bank over [4, 12) (rate 1): bank b gives it 0.5 until 16 (6 by then,
  // the other 2 at rate 1): 18, stall 6; the other 15 banks 12. Banks with the same bookings
  // share a finish, so the bank that differs is tried first, last and in the middle.
  for (int b : {0, 7, 15}) {
    Lx lx(config());
    EXPECT_EQ(lx.access(0, 16, {{b * 128, 128, 8, 2048}}, 0), 16u);
    EXPECT_EQ(lx.access(4, 8, {{0, 2048, 8, 2048}}, 4), 18u) << "bank " << b;
    auto s = lx.stats();
    for (int k = 0; k < 16; ++k)
      EXPECT_EQ(s[k]["conflict_stall_cycles"].get<uint64_t>(), k == b ? 6u : 0u)
          << "bank " << k << " with the earlier booking on bank " << b;
    // A third, 4 accesses a bank over [12, 16): the other banks are free from 12 (16); bank b
    // holds 0.5 + 8/14 until 16 (nothing), 8/14 until 18 (2 x 6/14), then the rest, 22/7, at
    // rate 1: 21.14, so 22.
    EXPECT_EQ(lx.access(12, 4, {{0, 2048, 4, 2048}}, 12), 22u) << "bank " << b;
  }
}

std::string fill(int cl, int64_t dst) {
  // 16 rows of one 128 B stick, row stride 1024 f16 = 2048 B: all 16 rows in bank 0.
  return "  sfp.fill cl=" + std::to_string(cl) + " dt=f16 dst=" + std::to_string(dst) +
         " dst_rs=1024 dst_cs=1 rows=16 cols=64 value=1\n";
}

TEST(Lx, TwoSfpsOnOneBankStallTheLaterOne) {
  // Alone, a fill takes d cycles (its closed form; 16 accesses on bank 0, d >= 16). Together:
  // sfp0 books [1, 1 + d) at rate 16/d first; sfp1 starts at 2 (decoded a cycle later) and
  // gets 1 - 16/d until 1 + d, i.e. (d - 1)(1 - 16/d) accesses, then 16/d per cycle:
  //   f = 1 + d + (16 - (d - 1)(1 - 16/d)) * d / 16; sfp1 ends ceil(f) (e.g. d = 24: 38.5 -> 39
  //   instead of 26).
  auto cfg = config(1);
  const uint64_t d = run(program(1, ".core 0\n" + fill(0, 0) + "  halt\n"), cfg).cycles - 1;
  ASSERT_GE(d, 16u);
  auto r = run(program(1, ".core 0\n" + fill(0, 0) + fill(1, 32768) + "  halt\n"), cfg);
  const double dd = static_cast<double>(d);
  const double f = 1 + dd + (16 - (dd - 1) * (1 - 16 / dd)) * dd / 16;
  const auto end1 = static_cast<uint64_t>(std::ceil(f - 1e-9));
  EXPECT_EQ(busy(r, 0, "sfp0"), d);
  EXPECT_EQ(busy(r, 0, "sfp1"), end1 - 2);
  EXPECT_EQ(r.cycles, end1);
  const auto& bank0 = r.stats["chip"]["cores"][0]["lx"]["banks"][0];
  EXPECT_EQ(bank0["accesses"].get<uint64_t>(), 32u);
  EXPECT_EQ(bank0["conflict_stall_cycles"].get<uint64_t>(), end1 - (2 + d));
  // Different banks (row 0 of the second fill in bank 1): no conflict, both take d.
  auto apart = run(program(1, ".core 0\n" + fill(0, 0) + fill(1, 32768 + 128) + "  halt\n"), cfg);
  EXPECT_EQ(busy(apart, 0, "sfp1"), d);
}

TEST(Dma, FourDimensionalLoadGathersAndTimes) {
  // 2 outer x 2 reps x 2 rows x 128 B = 8 pieces of 128 B; they issue at 17..24 (128 / 256 ->
  // 1 cycle each) and the DRAM serves them back to back (1.28 cycles each, from 17):
  // the last ends 17 + 8 * 1.28 = 27.24, lands 28 + 150 = 178.
  // The store of the gathered 1 KiB (after the token at 178): starts 178, issues 194, LX read [194,
  // 198) (8 chunks, 8 banks), DRAM 10.24 cycles: 194.00-204.24, lands 205 + 150 = 355.
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=128 rows=2 dram_stride=256 lx_stride=128 reps=2 dram_rep=1024 lx_rep=256 outer=2 dram_outer=4096 lx_outer=512
  sync.sig q=dma_in tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=65536 bytes=1024
  halt)",
                   1 << 17);
  DeviceMemory dram(1 << 17, 0);
  for (size_t i = 0; i < 8192; ++i) dram[i] = static_cast<uint8_t>(i * 13 + i / 256);
  auto r = simulate(p, config(1), dram);
  EXPECT_EQ(busy(r, 0, "dma_in"), 177u);
  EXPECT_EQ(r.cycles, 355u);
  for (int o = 0; o < 2; ++o)
    for (int rep = 0; rep < 2; ++rep)
      for (int row = 0; row < 2; ++row) {
        const size_t src = static_cast<size_t>(o * 4096 + rep * 1024 + row * 256);
        const size_t dst = 65536 + static_cast<size_t>(o * 512 + rep * 256 + row * 128);
        ASSERT_EQ(std::memcmp(dram.data() + src, dram.data() + dst, 128), 0) << o << rep << row;
      }
  EXPECT_EQ(r.dram_read_bytes, 1024u);
}

TEST(Dma, FourDimensionalStoreScatters) {
  // The store's 4-D form mirrors the load's: 2 x 2 x 1 x 128 B.
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=512
  sync.sig q=dma_in tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=8192 bytes=128 reps=2 lx_rep=128 dram_rep=1024 outer=2 lx_outer=256 dram_outer=4096
  halt)",
                   1 << 15);
  DeviceMemory dram(1 << 15, 0);
  for (size_t i = 0; i < 512; ++i) dram[i] = static_cast<uint8_t>(i * 5 + 1);
  simulate(p, config(1), dram);
  for (int o = 0; o < 2; ++o)
    for (int rep = 0; rep < 2; ++rep)
      ASSERT_EQ(std::memcmp(dram.data() + o * 256 + rep * 128,
                            dram.data() + 8192 + o * 4096 + rep * 1024, 128),
                0);
}

}  // namespace
}  // namespace spyre::sim
