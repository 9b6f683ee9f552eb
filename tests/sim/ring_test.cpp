// Rings: hop latency, multi-hop, link contention and arbitration, back-pressure, routing modes,
// the reduce ring (data and timing) and dma.load multicast (data and timing). Exact cycles with
// the arithmetic in comments (ring 128 B/cycle, 2 cycles per hop, buffer 512 B = 4 cycles).
#include <gtest/gtest.h>

#include <cstring>

#include "sim_test_util.h"
#include "spyre/error.h"
#include "spyre/sim/ring.h"

namespace spyre::sim {
namespace {

using test::busy;
using test::program;
using test::run;

arch::ArchConfig config(int cores) {
  arch::ArchConfig cfg = test::config(cores);
  cfg.dram_impl = "fifo";  // the DMA arithmetic below is the fifo model's
  return cfg;
}

const nlohmann::json& link(const SimResult& r, const char* ring, const char* dir, int node) {
  return r.stats["chip"][ring][dir][node];
}

TEST(Ring, HopAndMultiHopTakeHopsTimesLatencyPlusTransfer) {
  // 1024 B: D = 1024 / 128 = 8. One hop: 2 + 8 = 10. Three hops (8 cores, 0 -> 3): 3*2 + 8 = 14.
  Ring one(config(8));
  EXPECT_EQ(one.reserve(0, 1, 1024, 0), 10u);
  Ring three(config(8));
  EXPECT_EQ(three.hops(0, 3), 3);
  EXPECT_EQ(three.reserve(0, 3, 1024, 0), 14u);
  // End to end: core 0 decodes ring.send at 1: 1 + 3*2 + 8 = 15.
  auto p = program(4,
                   ".core 0\n  ring.send src=0 dst_core=3 dst=0 bytes=1024\n  halt\n"
                   ".core 1\n  halt\n.core 2\n  halt\n.core 3\n  halt\n");
  auto cfg = config(8);
  auto r = run(p, cfg);
  EXPECT_EQ(busy(r, 0, "ring"), 14u);
  EXPECT_EQ(r.cycles, 15u);
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(link(r, "ring", "cw", n)["busy_cycles"].get<uint64_t>(), 8u);
    EXPECT_EQ(link(r, "ring", "cw", n)["bytes"].get<uint64_t>(), 1024u);
  }
  EXPECT_EQ(link(r, "ring", "cw", 3)["bytes"].get<uint64_t>(), 0u);
}

TEST(Ring, TwoSendersOnOneLinkAreServedLowerCoreIdFirst) {
  // Cores 2 and 1 both request at cycle 1 for core 3 (1024 B, D = 8); the arbiter places
  // core 1 first although core 2's link 2->3 is its first hop.
  // core 1: link 1->2 [1, 9), link 2->3 entered 1 + 2 = 3, held [3, 11); arrives 3 + 2 + 8 = 13.
  // core 2: link 2->3 free at 11: enters 11 (stall 10), arrives 11 + 2 + 8 = 21.
  auto p = program(4, R"(.core 0
  halt
.core 1
  ring.send src=0 dst_core=3 dst=0 bytes=1024
  halt
.core 2
  ring.send src=0 dst_core=3 dst=1024 bytes=1024
  halt
.core 3
  halt)");
  auto r = run(p, config(4));
  EXPECT_EQ(busy(r, 1, "ring"), 12u);
  EXPECT_EQ(busy(r, 2, "ring"), 20u);
  EXPECT_EQ(r.cycles, 21u);
  const auto& l23 = link(r, "ring", "cw", 2);
  EXPECT_EQ(l23["busy_cycles"].get<uint64_t>(), 16u);
  EXPECT_EQ(l23["bytes"].get<uint64_t>(), 2048u);
  EXPECT_EQ(l23["stall_cycles"].get<uint64_t>(), 10u);
  EXPECT_EQ(r.stats["units"]["stall_cycles"], "cycles");
}

TEST(Ring, FullBufferHoldsTheUpstreamLink) {
  // A: 1 -> 2, 2048 B (D = 16): link 1->2 [0, 16), arrives 0 + 2 + 16 = 18.
  // B: 0 -> 2, 1024 B (D = 8): link 0->1 entered 0, head at node 1 at 2, link 1->2 free at 16:
  //   enters 16, arrives 16 + 2 + 8 = 26; tail_1 = 16 + 8 = 24.
  //   tail_0 = max(0 + 8, 24 - 2 - Bc): Bc = 0 -> 22, Bc = 4 -> 18, Bc = 16 -> 8 (no stall).
  // C: 0 -> 1, 128 B (D = 1) enters link 0->1 at tail_0: arrives tail_0 + 2 + 1.
  for (auto [buffer, tail0] : {std::pair<int64_t, uint64_t>{0, 22}, {512, 18}, {2048, 8}}) {
    auto cfg = config(4);
    cfg.ring_buffer_bytes = buffer;
    Ring ring(cfg);
    EXPECT_EQ(ring.reserve(1, 2, 2048, 0), 18u);
    EXPECT_EQ(ring.reserve(0, 2, 1024, 0), 26u);
    EXPECT_EQ(ring.reserve(0, 1, 128, 0), tail0 + 3) << "buffer " << buffer;
    const auto s = ring.stats();
    EXPECT_EQ(s["cw"][0]["backpressure_cycles"].get<uint64_t>(), tail0 - 8) << "buffer " << buffer;
    EXPECT_EQ(s["cw"][1]["stall_cycles"].get<uint64_t>(), 16u - 2u);
  }
}

TEST(Ring, EachRoutingModePicksItsDirection) {
  // 8 cores, 0 -> 6, 1024 B: shortest = ccw, 2 hops: 2*2 + 8 = 12; cw: 6 hops: 12 + 8 = 20;
  // ccw 0 -> 2: 6 hops: 20. A remote signal takes the same route: hops * 2.
  auto cfg = config(8);
  Ring shortest(cfg);
  EXPECT_FALSE(shortest.clockwise(0, 6));
  EXPECT_TRUE(shortest.clockwise(0, 4));  // tie: clockwise
  EXPECT_EQ(shortest.reserve(0, 6, 1024, 0), 12u);
  EXPECT_EQ(shortest.signal_latency(0, 6), 4u);
  cfg.ring_routing = "cw";
  Ring cw(cfg);
  EXPECT_EQ(cw.hops(0, 6), 6);
  EXPECT_EQ(cw.reserve(0, 6, 1024, 0), 20u);
  EXPECT_EQ(cw.signal_latency(0, 6), 12u);
  cfg.ring_routing = "ccw";
  Ring ccw(cfg);
  EXPECT_EQ(ccw.hops(0, 2), 6);
  EXPECT_EQ(ccw.reserve(0, 2, 1024, 0), 20u);
  EXPECT_EQ(ccw.stats()["ccw"][7]["bytes"].get<uint64_t>(), 1024u);  // 0 -> 7 is its first link
  // End to end with cw routing: 0 -> 3 of 4 cores is 3 hops: 1 + 6 + 8 = 15 (shortest: 11).
  auto p = program(4,
                   ".core 0\n  ring.send src=0 dst_core=3 dst=0 bytes=1024\n  halt\n"
                   ".core 1\n  halt\n.core 2\n  halt\n.core 3\n  halt\n");
  auto c4 = config(4);
  EXPECT_EQ(run(p, c4).cycles, 11u);
  c4.ring_routing = "cw";
  EXPECT_EQ(run(p, c4).cycles, 15u);
  c4.ring_routing = "zigzag";
  try {
    run(p, c4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ring.routing"), std::string::npos) << e.what();
  }
}

// Core 0 adds its block (1.0) into core 1's (2.0), core 1 then adds the sum into core 2's
// (4.0); core 2 stores the result. 64 fp32 = 256 B, D = 2.
const char* kReduceChain = R"(.core 0
  sfp.fill cl=0 dt=f32 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  sync.sig q=sfp0 tok=0
  sync.wait q=ring tok=0
  ring.red src=0 dst_core=1 dst=256 bytes=256 tok=1
  halt
.core 1
  sfp.fill cl=0 dt=f32 dst=256 dst_rs=64 dst_cs=1 rows=1 cols=64 value=2
  sync.wait q=ring tok=1
  ring.red src=256 dst_core=2 dst=512 bytes=256 tok=2
  halt
.core 2
  sfp.fill cl=0 dt=f32 dst=512 dst_rs=64 dst_cs=1 rows=1 cols=64 value=4
  sync.wait q=dma_out tok=2
  dma.store lx=512 dram=0 bytes=256
  halt
)";

TEST(Ring, ReduceChainAddsPartialSumsInFlight) {
  // Let F = the fill's end on every core (they all start at 1; F = 1 + sfp cycles).
  // core 0: ring.red starts at F; reduce ring 1 hop: arrives F + 2 + 2, + adder latency 4:
  //   done F + 8, token 1 on core 1. core 1: ring.red starts F + 8, done F + 16, token 2 on
  //   core 2. core 2: store starts F + 16, issues F + 32, DRAM 256 B = 2.56 cycles, lands
  //   ceil(F + 34.56) + 150 = F + 185.
  auto cfg = config(4);
  auto solo = run(program(1,
                          ".core 0\n  sfp.fill cl=0 dt=f32 dst=0 dst_rs=64 dst_cs=1 rows=1 "
                          "cols=64 value=1\n  halt\n"),
                  cfg);
  const uint64_t f = solo.cycles;
  auto p = program(3, kReduceChain, 4096);
  DeviceMemory dram(4096, 0);
  auto r = simulate(p, cfg, dram);
  EXPECT_EQ(busy(r, 0, "ring"), 8u);
  EXPECT_EQ(busy(r, 1, "ring"), 8u);
  EXPECT_EQ(r.cycles, f + 185u);
  for (int i = 0; i < 64; ++i) {
    float v;
    std::memcpy(&v, dram.data() + 4 * i, 4);
    ASSERT_EQ(v, 7.0f) << i;
  }
  EXPECT_EQ(r.stats["chip"]["reduce_ring"]["transfers"].get<uint64_t>(), 2u);
  EXPECT_EQ(r.stats["chip"]["ring"]["transfers"].get<uint64_t>(), 0u);
  // Timing-only mode gives the same cycles.
  SimOptions t;
  t.functional = false;
  EXPECT_EQ(run(p, cfg, t).cycles, r.cycles);
}

TEST(Ring, ReduceOfAPartialFloatIsAnError) {
  auto p =
      program(2, ".core 0\n  ring.red src=0 dst_core=1 dst=0 bytes=6\n  halt\n.core 1\n  halt\n");
  EXPECT_THROW(run(p, config(2)), Error);
}

// Core 0 loads 4 KiB once and multicasts it to cores 1, 2 and 3; each stores its copy.
const char* kMulticast = R"(.core 0
  dma.load dram=0 lx=0 bytes=4096 mcast=14 mtok=0
  halt
.core 1
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=4096 bytes=4096
  halt
.core 2
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=8192 bytes=4096
  halt
.core 3
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=12288 bytes=4096
  halt
)";

TEST(Ring, MulticastLoadReadsDramOnceAndFeedsEveryCore) {
  // Load: issue 17, DRAM 17.00-57.96, lands 58 + 150 = 208 (in LX: its write [192, 208) is 2
  // accesses per bank in 16 cycles, no stall). Multicast of 4096 B (D = 32) requested at 208:
  //   cw chain to core 2 (tie: cw): link 0->1 entered 208, core 1 has it 208 + 2 + 32 = 242;
  //   link 1->2 entered 210, core 2 has it 244. ccw chain: core 3 has it 242. Done at 244.
  // Token 0 on cores 1-3 at 244; their stores issue at 260; the DRAM serves them by core id:
  //   260.00-300.96 -> 451, 300.96-341.92 -> 492, 341.92-382.88 -> 533.
  auto cfg = config(4);
  auto p = program(4, kMulticast, 16384);
  DeviceMemory dram(16384, 0);
  for (int i = 0; i < 4096; ++i) dram[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 7 + 3);
  auto r = simulate(p, cfg, dram);
  EXPECT_EQ(busy(r, 0, "dma_in"), 243u);
  EXPECT_EQ(r.cycles, 533u);
  EXPECT_EQ(r.dram_read_bytes, 4096u);
  for (int c = 1; c < 4; ++c)
    ASSERT_EQ(std::memcmp(dram.data(), dram.data() + 4096 * c, 4096), 0) << "core " << c;
  EXPECT_EQ(r.stats["chip"]["ring"]["transfers"].get<uint64_t>(), 1u);
  EXPECT_EQ(link(r, "ring", "cw", 1)["bytes"].get<uint64_t>(), 4096u);
  EXPECT_EQ(link(r, "ring", "ccw", 0)["bytes"].get<uint64_t>(), 4096u);
}

TEST(Ring, MulticastToACoreOutsideTheProgramIsAnError) {
  auto p =
      program(2, ".core 0\n  dma.load dram=0 lx=0 bytes=128 mcast=4\n  halt\n.core 1\n  halt\n");
  try {
    run(p, config(4));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("core 0 instruction #0 (dma.load): mcast"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spyre::sim
