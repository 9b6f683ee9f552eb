// Exact cycle counts of each unit against its closed form (default "spyre" parameters, see
// sim_test_util.h). A program's first instruction reaches its queue after 1 issue cycle.
#include <gtest/gtest.h>

#include "sim_test_util.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/sim/dma.h"
#include "spyre/sim/ring.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

using test::busy;
using test::config;
using test::program;
using test::run;

TEST(PtArray, TileTakesFoldsTimesKPlusDrain) {
  // m=16, n=128, k=32, f16: ceil(16/8) * ceil(128/64) = 4 folds, each k + (8 + 64 - 2):
  // 4 * (32 + 70) = 408 (pt.fill_drain = per_fold).
  auto p = program(1, R"(.core 0
  pt.mm cl=0 a=0 b=4096 c=16384 m=16 n=128 k=32 lda=32 ldb=128 ldc=128 dt=f16
  halt)");
  EXPECT_EQ(arch::pt_mm_cycles(config(), p.cores[0][0]), 408);
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "pt0"), 408u);
  EXPECT_EQ(r.cycles, 1u + 408u);  // issue + PT
}

TEST(PtArray, Int8HalvesKRoundedUp) {
  // m=8, n=64, k=33, i8: 1 fold * ceil(33/2) = 17, + 70 = 87.
  auto p = program(1, R"(.core 0
  pt.mm cl=1 a=0 b=4096 c=16384 m=8 n=64 k=33 lda=33 ldb=64 ldc=64 dt=i8
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "pt1"), 87u);
  EXPECT_EQ(r.cycles, 88u);
}

TEST(PtArray, TwoCoreletsRunConcurrentlyAndOneQueueRunsInOrder) {
  // Each pt.mm: 1 fold * 64 + 70 = 134. pt0 gets two (134 + 134), pt1 one, in parallel.
  auto p = program(1, R"(.core 0
  pt.mm cl=0 a=0 b=4096 c=16384 m=8 n=64 k=64 lda=64 ldb=64 ldc=64
  pt.mm cl=1 a=0 b=4096 c=32768 m=8 n=64 k=64 lda=64 ldb=64 ldc=64
  pt.mm cl=0 a=0 b=4096 c=16384 m=8 n=64 k=64 lda=64 ldb=64 ldc=64 flags=1
  halt)");
  auto r = run(p, config());
  // pt0: starts at 1, ends 135; the third instruction (queued at 3) runs 135..269.
  EXPECT_EQ(r.cycles, 269u);
  EXPECT_EQ(busy(r, 0, "pt0"), 268u);
  EXPECT_EQ(busy(r, 0, "pt1"), 134u);
  // utilisation = busy / (cycles * 2 PT per core * 4 cores)
  EXPECT_DOUBLE_EQ(r.utilisation("pt"), (268.0 + 134.0) / (269.0 * 8.0));
}

TEST(Sfp, SimpleOpTakesLatencyPlusVectors) {
  // relu on 4x100 f16: 8 + ceil(400 / 64) = 8 + 7 = 15; on f32: 8 + ceil(400 / 32) = 21.
  auto p = program(1, R"(.core 0
  sfp.un cl=0 fn=relu dt=f16 dst=0 dst_rs=100 dst_cs=1 a=0 a_rs=100 a_cs=1 rows=4 cols=100
  sfp.un cl=1 fn=relu dt=f32 dst=4096 dst_rs=100 dst_cs=1 a=4096 a_rs=100 a_cs=1 rows=4 cols=100
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "sfp0"), 15u);
  EXPECT_EQ(busy(r, 0, "sfp1"), 21u);
  EXPECT_EQ(r.cycles, 2u + 21u);
}

TEST(Sfp, TranscendentalTakesFactorPerVector) {
  // exp on 4x100 f16: 8 + 7 * 4 = 36. cvt f16 -> f32 uses the wider type: 8 + 13 = 21.
  auto p = program(1, R"(.core 0
  sfp.un cl=0 fn=exp dt=f16 dst=0 dst_rs=100 dst_cs=1 a=0 a_rs=100 a_cs=1 rows=4 cols=100
  sfp.cvt cl=1 sdt=f16 ddt=f32 dst=4096 dst_rs=100 dst_cs=1 a=0 a_rs=100 a_cs=1 rows=4 cols=100
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "sfp0"), 36u);
  EXPECT_EQ(busy(r, 0, "sfp1"), 21u);
  EXPECT_EQ(r.cycles, 1u + 36u);
}

TEST(Dma, OneBurstLoadTakesSetupServiceAndLatency) {
  // starts at 1; request issued at 1 + 16 = 17; service 4096 / 100 = 40.96 -> ends 57.96,
  // rounded up 58; lands 58 + 150 = 208.
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(r.cycles, 208u);
  EXPECT_EQ(busy(r, 0, "dma_in"), 207u);
  EXPECT_EQ(r.dram_read_bytes, 4096u);
}

TEST(Dma, OneBurstInFlightByDefault) {
  // dma.max_outstanding_bytes = 4096: each 4096 B request waits for the one before to land.
  // Request 0: 17, served 17.00-57.96, lands 208; request 1: served 208.00-248.96, lands
  // 249 + 150 = 399; request 2: served 399.00-439.96, lands 440 + 150 = 590.
  ASSERT_EQ(config().dma_max_outstanding_bytes, 4096);
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096 rows=3 dram_stride=4096 lx_stride=4096
  halt)");
  EXPECT_EQ(run(p, config()).cycles, 590u);
}

TEST(Dma, SeveralBurstsQueueAtTheDramWhenTheBudgetAllows) {
  // A budget of three bursts: requests issue at 17, 33, 49 (4096 / 256 = 16 cycles apiece).
  // DRAM: 17.00-57.96, 57.96-98.92, 98.92-139.88; the last lands ceil(139.88) + 150 = 290.
  auto cfg = config();
  cfg.dma_max_outstanding_bytes = 3 * 4096;
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096 rows=3 dram_stride=4096 lx_stride=4096
  halt)");
  EXPECT_EQ(run(p, cfg).cycles, 290u);
}

TEST(Dma, SmallPiecesShareTheByteBudget) {
  // 512 B pieces: eight fit in the 4096 B budget. Eight rows run as with no budget at all;
  // sixteen wait a round trip (150 cycles) for the first eight to land.
  auto free = config();
  free.dma_max_outstanding_bytes = int64_t{1} << 20;
  auto rows = [](int n) {
    return program(1, ".core 0\n  dma.load dram=0 lx=0 bytes=512 rows=" + std::to_string(n) +
                          " dram_stride=512 lx_stride=512\n  halt");
  };
  EXPECT_EQ(run(rows(8), config()).cycles, run(rows(8), free).cycles);
  EXPECT_GT(run(rows(16), config()).cycles, run(rows(16), free).cycles + 100);
}

TEST(Dma, TwoCoresShareTheDram) {
  // Both request at 17; core 0 first (tie by core id): 17.00-57.96 -> 208;
  // core 1: 57.96-98.92 -> 99 + 150 = 249.
  auto p = program(2, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096
  halt
.core 1
  dma.load dram=4096 lx=0 bytes=4096
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "dma_in"), 207u);
  EXPECT_EQ(busy(r, 1, "dma_in"), 248u);
  EXPECT_EQ(r.cycles, 249u);
  EXPECT_EQ(r.stats["chip"]["dram"]["read_bytes"].get<uint64_t>(), 8192u);
}

TEST(MemPort, ASharedPortPassesDataAtItsRate) {
  // As TwoCoresShareTheDram, both cores on one port of 75 GB/s (4096 B = 54614 ps) that
  // buffers one burst: core 0's data, ready at 208 (138667 ps), passes at once (v = 138667);
  // core 1's, ready at 249 (166000 ps), waits for the port: v = 138667 + 54614 = 193281 ps ->
  // cycle 290. A buffer of two bursts lets it pass at once; so does a port each.
  auto p = program(2, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096
  halt
.core 1
  dma.load dram=4096 lx=0 bytes=4096
  halt)");
  auto cfg = config(2);
  cfg.mem_port_gbps = 75;
  cfg.mem_port_buffer_bytes = 4096;
  cfg.mem_cores_per_port = 2;
  auto r = run(p, cfg);
  EXPECT_EQ(busy(r, 0, "dma_in"), 207u);
  EXPECT_EQ(r.cycles, 290u);
  const auto& port = r.stats["chip"]["mem_ports"];
  ASSERT_EQ(port.size(), 1u);
  EXPECT_EQ(port[0]["read_bytes"].get<uint64_t>(), 8192u);
  EXPECT_GT(port[0]["read_wait_ns"].get<double>(), 0.0);
  cfg.mem_port_buffer_bytes = 8192;
  EXPECT_EQ(run(p, cfg).cycles, 249u);
  cfg.mem_port_buffer_bytes = 4096;
  cfg.mem_cores_per_port = 1;
  r = run(p, cfg);
  EXPECT_EQ(r.cycles, 249u);
  EXPECT_EQ(r.stats["chip"]["mem_ports"].size(), 2u);
}

TEST(MemPort, AnIdlePortAddsNoLatency) {
  auto p = program(1, R"(.core 0
  dma.store lx=0 dram=0 bytes=4096
  halt)");
  auto slow = config(1), fast = config(1);
  slow.mem_port_gbps = 10;  // 4096 B take 410 ns on the port, longer than the round trip
  EXPECT_EQ(run(p, slow).cycles, run(p, fast).cycles);
}

TEST(Dma, PartialWordCostsAWholeWordAndStoreIsSymmetric) {
  // store of 100 B: cost 128 B = 1.28 cycles; issue at 17, ends 18.28 -> 19, lands 169.
  auto p = program(1, R"(.core 0
  dma.store lx=0 dram=0 bytes=100
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(r.cycles, 169u);
  EXPECT_EQ(r.dram_write_bytes, 100u);
  EXPECT_EQ(r.stats["chip"]["dram"]["moved_bytes"].get<uint64_t>(), 128u);
}

TEST(Dma, SeventeenthRequestWaitsForTheOutstandingLimit) {
  // 17 rows of 128 B: requests 0..15 issue at 17..32 (1 cycle each), the DRAM serves them
  // back to back (1.28 cycles each). Request 0 lands ceil(18.28) + 150 = 169: only then may
  // request 16 issue (16 outstanding); served 169.00-170.28, lands 171 + 150 = 321.
  ASSERT_EQ(config().dma_max_outstanding, 16);
  auto p = program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=128 rows=17 dram_stride=128 lx_stride=128
  halt)");
  EXPECT_EQ(run(p, config()).cycles, 321u);
}

TEST(Ring, OneHopTakesHopLatencyPlusTransfer) {
  // 1024 B over 1 hop: 2 + 1024 / 128 = 10; starts at 1.
  auto p = program(2, R"(.core 0
  ring.send src=0 dst_core=1 dst=0 bytes=1024
  halt
.core 1
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "ring"), 10u);
  EXPECT_EQ(r.cycles, 11u);
}

TEST(Ring, ThreeHopsEitherWay) {
  // 8 cores: 0 -> 3 clockwise and 0 -> 5 counter-clockwise are both 3 hops: 6 + 8 = 14.
  auto cfg = config(8);
  Ring ring(cfg);
  EXPECT_EQ(ring.hops(0, 3), 3);
  EXPECT_EQ(ring.hops(0, 5), 3);
  EXPECT_TRUE(ring.clockwise(0, 4));  // tie: clockwise
  EXPECT_FALSE(ring.clockwise(0, 5));
  auto p = program(6, R"(.core 0
  ring.send src=0 dst_core=3 dst=0 bytes=1024
  halt
.core 4
  ring.send src=0 dst_core=0 dst=1024 bytes=1024
  halt)");
  // core 4 -> 0: cw 4, ccw 4: clockwise (4->5->6->7->0, no link shared with 0->1->2->3),
  // 4 hops: 8 + 8 = 16.
  auto r = run(p, cfg);
  EXPECT_EQ(busy(r, 0, "ring"), 14u);
  EXPECT_EQ(busy(r, 4, "ring"), 16u);
  EXPECT_EQ(r.cycles, 17u);
}

TEST(Ring, SharedLinkSerialisesTransfers) {
  // Both send 1024 B to core 2 at cycle 1. Core 0 (first): links 0->1 and 1->2, done
  // 1 + 2*2 + 8 = 13, link 1->2 busy until 1 + 2 + 8 = 11. Core 1 waits for it: 11 + 2 + 8 = 21.
  auto p = program(3, R"(.core 0
  ring.send src=0 dst_core=2 dst=0 bytes=1024
  halt
.core 1
  ring.send src=0 dst_core=2 dst=1024 bytes=1024
  halt
.core 2
  halt)");
  auto r = run(p, config());
  EXPECT_EQ(busy(r, 0, "ring"), 12u);
  EXPECT_EQ(busy(r, 1, "ring"), 20u);
  EXPECT_EQ(r.cycles, 21u);
}

TEST(Sequencer, StallsWhenTheQueueIsFull) {
  // queue_depth 1: the unit takes instruction 0 at 1; instruction 1 waits in the queue;
  // instruction 2 cannot be placed until the unit takes instruction 1 at 1 + 9 = 10.
  auto cfg = config();
  cfg.queue_depth = 1;
  auto p = program(1, R"(.core 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  halt)");
  auto r = run(p, cfg);
  EXPECT_EQ(r.cycles, 1u + 3u * 9u);
  EXPECT_EQ(r.stats["chip"]["cores"][0]["sequencer"]["full_stall_cycles"].get<uint64_t>(),
            10u - 3u);
}

// Nothing ticks while the chip waits: a run whose DMA waits 1 ms for each DRAM response
// (1.5 M idle cycles) costs the simulator exactly the scheduler callbacks and SystemC
// activations of the same run with the usual latency, on both DRAM models.
TEST(Kernel, IdleTimeCostsNoEvents) {
  const auto p = program(2, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096 rows=4 dram_stride=4096 lx_stride=4096
  sync.sig q=dma_in tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=65536 bytes=4096 rows=4 lx_stride=4096 dram_stride=4096
  halt
.core 1
  dma.load dram=16384 lx=0 bytes=4096 rows=2 dram_stride=4096 lx_stride=4096
  halt)");
  for (const char* impl : {"fifo", "lpddr5"}) {
    SCOPED_TRACE(impl);
    arch::ArchConfig quick = config(2), slow = config(2);
    quick.dram_impl = slow.dram_impl = impl;
    quick.dma_max_outstanding_bytes = slow.dma_max_outstanding_bytes = int64_t{1} << 20;
    slow.dram_latency_ns = 1e6;           // fifo: request to first data
    slow.dram_frontend_latency_ns = 1e6;  // lpddr5: added to each request's last data
    const SimResult a = run(p, quick), b = run(p, slow);
    EXPECT_GT(b.cycles, a.cycles + 2 * 1'400'000);  // two round trips in sequence on core 0
    EXPECT_GT(a.sim_events, 0u);
    EXPECT_EQ(b.sim_events, a.sim_events);
    EXPECT_EQ(b.sim_activations, a.sim_activations);
  }
}

}  // namespace
}  // namespace spyre::sim
