// Whole-chip behaviour: token synchronisation across cores, barriers, error reports, modes,
// determinism across runs in one process, kernel spans, stats and tracing.
#include <gtest/gtest.h>

#include <vector>

#include "../traces/recording_sink.h"
#include "sim_test_util.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/traces/chrome.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace spyre::sim {
namespace {

using test::busy;
using test::config;
using test::kProducerConsumer;
using test::program;
using test::run;
using test::wait;

TEST(Chip, ProducerSignalsConsumerWithCorrectDataAndTiming) {
  // core 0: fill 1..10 (8 + 1); its store waits for token 0 (10), issues at 26, DRAM
  //   26.00-27.28 -> 28 + 150 = 178; the signal to core 1 (1 hop) arrives at 180.
  // core 1: load starts 180, issues 196, DRAM 196.00-197.28 -> 198 + 150 = 348; neg
  //   348..357; store starts 357, issues 373, 373.00-374.28 -> 375 + 150 = 525.
  auto p = program(2, kProducerConsumer, 4096);
  DeviceMemory dram(4096, 0);
  auto r = simulate(p, config(2), dram);
  EXPECT_EQ(r.cycles, 525u);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(isa::load_element(dram.data() + 2 * i, isa::DType::F16), 3.5);
    ASSERT_EQ(isa::load_element(dram.data() + 128 + 2 * i, isa::DType::F16), -3.5);
  }
  EXPECT_EQ(wait(r, 0, "dma_out"), 10u - 3u);  // queued at 3, token at 10
  EXPECT_EQ(wait(r, 1, "dma_in"), 180u - 1u);  // queued at 1, token at 180
  EXPECT_EQ(busy(r, 1, "dma_in"), 348u - 180u);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "produce");
  EXPECT_EQ(r.kernels[0].start_cycle, 1u);
  EXPECT_EQ(r.kernels[0].end_cycle, 178u);
  EXPECT_EQ(r.kernels[1].start_cycle, 180u);
  EXPECT_EQ(r.kernels[1].end_cycle, 525u);
  EXPECT_EQ(r.dram_read_bytes, 128u);
  EXPECT_EQ(r.dram_write_bytes, 256u);
}

TEST(Chip, TimingOnlyModeGivesIdenticalCyclesAndStats) {
  auto p = program(2, kProducerConsumer, 4096);
  SimOptions timing_only;
  timing_only.functional = false;
  DeviceMemory untouched(4096, 0);
  auto a = run(p, config(2));
  auto b = simulate(p, config(2), untouched, timing_only);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.stats, b.stats);
  EXPECT_EQ(untouched, DeviceMemory(4096, 0));  // no data moved
}

TEST(Chip, TwoRunsInOneProcessGiveIdenticalResults) {
  // The SystemC kernel shell is elaborated once and re-entered: each run counts from 0.
  auto p = program(2, kProducerConsumer, 4096);
  auto a = run(p, config(2));
  auto b = run(p, config(2));
  EXPECT_EQ(a.cycles, 525u);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.stats, b.stats);
}

TEST(Chip, BarrierOpensLatencyAfterTheLastCoreArrives) {
  // core 0: fill of 640 elements 1..19 (8 + 10), barrier once drained at 19; core 1 arrives
  // at 1. Opens 19 + 32 = 51; both decode the next fill (1 cycle), run it 52..61.
  auto p = program(2, R"(.core 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=640 dst_cs=1 rows=1 cols=640 value=1
  barrier
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  halt
.core 1
  barrier
  sfp.fill cl=1 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  halt)");
  auto r = run(p, config(2));
  EXPECT_EQ(r.cycles, 61u);
  EXPECT_EQ(busy(r, 1, "sfp1"), 9u);
  EXPECT_EQ(r.stats["chip"]["barriers"].get<uint64_t>(), 1u);
}

TEST(Chip, DeadlockNamesTheCoreQueueAndToken) {
  auto p = program(2, R"(.core 0
  halt
.core 1
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  sync.wait q=pt0 tok=7
  halt)");
  try {
    run(p, config(2));
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("queue pt0 waits on token 7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("next instruction #2 halt"), std::string::npos) << msg;
  }
}

TEST(Chip, BarrierThatAHaltedCoreNeverReachesIsADeadlock) {
  auto p = program(2, ".core 0\n  barrier\n  halt\n.core 1\n  halt\n");
  try {
    run(p, config(2));
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("core 0: next instruction #0 barrier waits at the barrier"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("1 of 2 cores arrived"), std::string::npos) << msg;
  }
}

TEST(Chip, OutOfRangeLxAccessNamesTheInstruction) {
  // 64 f16 = 128 B at 2 MiB - 64 runs past the 2 MiB LX.
  auto p = program(1, R"(.core 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  sfp.fill cl=1 dt=f16 dst=2097088 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1
  halt)");
  for (bool functional : {true, false}) {
    SimOptions o;
    o.functional = functional;
    try {
      run(p, config(1), o);
      FAIL() << "expected an LX range error";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("core 0 instruction #1 (sfp.fill)"), std::string::npos) << msg;
      EXPECT_NE(msg.find("LX access [2097088, 2097216)"), std::string::npos) << msg;
    }
  }
}

TEST(Chip, OutOfRangeDramAccessNamesTheInstruction) {
  auto p = program(1, ".core 0\n  dma.load dram=4000 lx=0 bytes=128\n  halt\n", 4096);
  try {
    run(p, config(1));
    FAIL() << "expected a DRAM range error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("core 0 instruction #0 (dma.load): DRAM access [4000, 4128)"),
              std::string::npos)
        << msg;
  }
}

TEST(Chip, WatchdogStopsARunThatGoesOnTooLong) {
  auto p = program(1, R"(.core 0
  pt.mm cl=0 a=0 b=4096 c=16384 m=16 n=128 k=32 lda=32 ldb=128 ldc=128 dt=f16
  halt)");
  SimOptions o;
  o.max_cycles = 50;
  try {
    run(p, config(1), o);
    FAIL() << "expected the watchdog";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("watchdog"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 0"), std::string::npos) << msg;
  }
  o.max_cycles = 409;  // exactly enough: 1 issue + 4 folds x (32 + 70)
  EXPECT_EQ(run(p, config(1), o).cycles, 409u);
}

TEST(Chip, ProgramWithMoreCoresThanTheArchIsRejected) {
  auto p = program(4, ".core 0\n  halt\n");
  try {
    run(p, config(2));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("program needs 4 cores, arch has 2"), std::string::npos);
  }
}

TEST(Chip, DataSegmentsAreCopiedIntoDeviceMemory) {
  auto p = program(1, ".data 16 0102a0ff\n.core 0\n  halt\n", 64);
  DeviceMemory dram(64, 0);
  simulate(p, config(1), dram);
  EXPECT_EQ(dram[16], 0x01);
  EXPECT_EQ(dram[19], 0xff);
}

TEST(Chip, StatsTreeHasPerCoreQueuesAndUnits) {
  auto r = run(program(2, kProducerConsumer, 4096), config(2));
  const auto& s = r.stats;
  ASSERT_EQ(s["chip"]["cores"].size(), 2u);
  for (const char* q : {"dma_in", "dma_out", "pt0", "pt1", "sfp0", "sfp1", "ring"})
    EXPECT_TRUE(s["chip"]["cores"][0].contains(q)) << q;
  EXPECT_EQ(s["chip"]["cycles"].get<uint64_t>(), 525u);
  EXPECT_EQ(s["units"]["busy_cycles"], "cycles");
  EXPECT_EQ(s["kernels"][1]["name"], "consume");
  // sfp: 9 (fill) + 9 (neg) busy over 525 cycles * 2 SFPs * 2 cores
  EXPECT_DOUBLE_EQ(r.utilisation("sfp"), 18.0 / (525.0 * 4.0));
  EXPECT_THROW(r.utilisation("gpu"), Error);
}

using traces::testing::RecordingSink;  // tests/traces/recording_sink.h

TEST(Chip, TraceHasOneSpanPerInstructionAndTokenWaits) {
  RecordingSink sink;
  SimOptions o;
  o.trace = &sink;
  auto r = run(program(2, kProducerConsumer, 4096), config(2), o);
  EXPECT_EQ(r.cycles, 525u);
  const auto* neg = sink.find("spyre.core_1", "sfp0", "sfp.un");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->start, 348u);
  EXPECT_EQ(neg->dur, 9u);
  EXPECT_EQ(neg->kernel, "consume");
  const auto* w = sink.find("spyre.core_1", "dma_in", "wait tok 0");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->start, 1u);
  EXPECT_EQ(w->dur, 179u);
  EXPECT_NE(sink.find("spyre.dram", "fifo", "write"), nullptr);
  // tracing does not change timing
  EXPECT_EQ(run(program(2, kProducerConsumer, 4096), config(2)).stats, r.stats);
}

TEST(Chip, ChromeTraceFileHoldsTheInstructions) {
  auto path = std::filesystem::temp_directory_path() / "spyre_sim_chip_test.trace.json";
  {
    traces::ChromeTraceWriter w(path.string(), 1.5);
    SimOptions o;
    o.trace = &w;
    run(program(2, kProducerConsumer, 4096), config(2), o);
    w.finish();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("sfp.fill"), std::string::npos);
  EXPECT_NE(text.str().find("wait tok 0"), std::string::npos);
  std::filesystem::remove(path);
}

// host.call (compiler/host_call.h): the core drains its queues, the inputs cross the host link,
// the host runs the op, the outputs cross back. The store before it lands at 178 (as in
// ProducerSignalsConsumerWithCorrectDataAndTiming). 5200 B in: 1000 ns + 5200 / 52 = 1100 ns;
// the call 20000 ns; 2600 B out: 1000 + 50 = 1050 ns; 22150 ns at 1.5 GHz = 33225 cycles:
// 178..33403, halt at 33404. The host sees the stored 1.5 (f16 0x3E00) and writes 7 at byte 64.
TEST(Chip, HostCallCrossesTheLinkRunsTheHostAndLetsTheCoreGoOn) {
  auto p = program(1, R"(.kernel 0 store
.kernel 1 host_op
.core 0
.k 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=1.5
  sync.sig q=sfp0 tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=0 bytes=128
  sync.sig q=dma_out tok=1
.k 1
  host.call in_bytes=5200 out_bytes=2600
  halt
)",
                   4096);
  auto cfg = config(1);
  EXPECT_EQ(arch::host_call_cycles(cfg, 5200, 2600), 33225);
  std::vector<uint16_t> kernels;
  uint8_t seen = 0;
  SimOptions opts;
  opts.host_call = [&](uint16_t kernel, uint8_t* dram, uint64_t bytes) {
    kernels.push_back(kernel);
    ASSERT_EQ(bytes, 4096u);
    seen = dram[1];  // the store before the call has landed
    dram[64] = 7;
  };
  DeviceMemory dram(4096, 0);
  auto r = simulate(p, cfg, dram, opts);
  EXPECT_EQ(kernels, std::vector<uint16_t>{1});
  EXPECT_EQ(seen, 0x3E);
  EXPECT_EQ(dram[64], 7);
  const auto& host = r.stats["chip"]["host"];
  EXPECT_EQ(host["calls"], 1);
  EXPECT_EQ(host["in_bytes"], 5200);
  EXPECT_EQ(host["out_bytes"], 2600);
  EXPECT_EQ(host["busy_cycles"], 33225);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[1].name, "host_op");
  EXPECT_EQ(r.kernels[1].start_cycle, 178u);
  EXPECT_EQ(r.kernels[1].end_cycle, 178u + 33225u);
  EXPECT_EQ(r.cycles, 178u + 33225u + 1u);

  // Timing-only: no host is needed and the cycles are the same.
  SimOptions timing_only;
  timing_only.functional = false;
  DeviceMemory untouched(4096, 0);
  EXPECT_EQ(simulate(p, cfg, untouched, timing_only).cycles, r.cycles);

  // Functional without a host: the error names the instruction and what to do.
  DeviceMemory again(4096, 0);
  try {
    simulate(p, cfg, again);
    FAIL() << "a functional host.call without a host ran";
  } catch (const spyre::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("host fallback needs a host"), std::string::npos) << what;
    EXPECT_NE(what.find("host.call"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace spyre::sim
