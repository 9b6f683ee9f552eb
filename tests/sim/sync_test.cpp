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

}  // namespace
}  // namespace spyre::sim
