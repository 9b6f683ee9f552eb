// Synchronisation: a cyclic token wait between two cores is a deadlock whose report lists
// what every core waits on (the sequencer and each queue's head).
#include <gtest/gtest.h>

#include "sim_test_util.h"
#include "spyre/error.h"

namespace spyre::sim {
namespace {

using test::config;
using test::program;
using test::run;

TEST(Sync, CyclicWaitBetweenTwoCoresReportsEveryCoresWaits) {
  // Core 0's ring queue waits for token 1 that only core 1's ring.send would give, and core
  // 1's waits for token 2 from core 0. Both sequencers reach halt at 3 and wait to drain.
  auto p = program(3, R"(.core 0
  sync.wait q=ring tok=1
  ring.send src=0 dst_core=1 dst=0 bytes=128 tok=2
  halt
.core 1
  sync.wait q=ring tok=2
  ring.send src=0 dst_core=0 dst=0 bytes=128 tok=1
  halt
.core 2
  halt)");
  try {
    run(p, config(4));
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("deadlock at cycle 3"), std::string::npos) << msg;
    EXPECT_NE(
        msg.find("core 0: next instruction #2 halt waits for its queues to drain; queue ring "
                 "waits on token 1 (value 0) at instruction #0 (2 queued); other queues empty"),
        std::string::npos)
        << msg;
    EXPECT_NE(
        msg.find("core 1: next instruction #2 halt waits for its queues to drain; queue ring "
                 "waits on token 2 (value 0) at instruction #0 (2 queued); other queues empty"),
        std::string::npos)
        << msg;
    EXPECT_NE(msg.find("core 2: halted at cycle 1"), std::string::npos) << msg;
  }
}

TEST(Sync, WatchdogReportNamesTheExecutingInstruction) {
  // A long SFP op still running when the watchdog fires is listed with its start cycle.
  auto p = program(1, R"(.core 0
  sfp.un cl=1 fn=exp dt=f16 dst=0 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 rows=4096 cols=64
  halt)");
  SimOptions o;
  o.max_cycles = 100;
  try {
    run(p, config(1), o);
    FAIL() << "expected the watchdog";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("watchdog"), std::string::npos) << msg;
    EXPECT_NE(msg.find("queue sfp1 executes instruction #0 sfp.un since cycle 1 (0 queued)"),
              std::string::npos)
        << msg;
  }
}

// sync.delay: the sequencer issues nothing for its cycles, the queues go on meanwhile, and the
// kernel's span leaves it out (the compiler's kernel start-up under compiler.schedule=ibm).
TEST(Sync, DelayHoldsTheSequencerButNotTheQueues) {
  const char* fill = "  sfp.fill cl=0 dt=f16 dst=0 dst_rs=128 dst_cs=1 rows=256 cols=64 value=1\n";
  auto body = [&](const std::string& before, const std::string& after) {
    return ".kernel 0 k\n.core 0\n.k 0\n" + before + fill + after + "  halt\n";
  };
  const auto cfg = config(1);
  const auto plain = run(program(1, body("", "")), cfg);
  const auto first = run(program(1, body("  sync.delay cycles=1000\n", "")), cfg);
  // Ahead of the work: everything moves by exactly the delay (plus its own issue slot).
  EXPECT_EQ(first.cycles, plain.cycles + 1000 + 1);
  ASSERT_EQ(first.kernels.size(), 1u);
  EXPECT_EQ(first.kernels[0].start_cycle, plain.kernels[0].start_cycle + 1000 + 1);
  EXPECT_EQ(first.kernels[0].end_cycle - first.kernels[0].start_cycle,
            plain.kernels[0].end_cycle - plain.kernels[0].start_cycle);
  // Behind the work: the fill runs during the delay, so the two overlap.
  const auto after = run(program(1, body("", "  sync.delay cycles=1000\n")), cfg);
  const uint64_t fill_cycles = plain.kernels[0].end_cycle - plain.kernels[0].start_cycle;
  ASSERT_GT(fill_cycles, 100u);
  EXPECT_LT(after.cycles, plain.cycles + 1000);
  EXPECT_GE(after.cycles, 1000u);
}

}  // namespace
}  // namespace spyre::sim
