// The event queue and the kernel shell on their own.
#include <gtest/gtest.h>

#include <string>

#include "spyre/sim/kernel.h"
#include "spyre/sim/scheduler.h"

namespace spyre::sim {
namespace {

TEST(EventQueue, EventsOfOneCycleRunInSchedulingOrderAndLateOnesLast) {
  EventQueue q;
  std::string log;
  q.at(5, [&] { log += "b"; });
  q.at_end_of(5, [&] { log += "L"; });
  q.at(2, [&] {
    log += "a";
    q.at(5, [&] { log += "d"; });  // added later, still before the late event of cycle 5
  });
  q.at(5, [&] { log += "c"; });
  q.run_all();
  EXPECT_EQ(log, "abcdL");
  EXPECT_EQ(q.now(), 5u);
}

TEST(KernelShell, RunsTheQueueOnSystemCAndCanBeEnteredAgain) {
  for (int run = 0; run < 3; ++run) {
    EventQueue q;
    std::string log;
    q.at(0, [&] { log += "0"; });
    q.at(1000, [&] {
      log += "1";
      q.at(1500, [&] { log += "2"; });
    });
    EXPECT_EQ(run_on_kernel(q, 667, 0), KernelStop::Drained);
    EXPECT_EQ(log, "012");
    EXPECT_EQ(q.now(), 1500u);  // cycles count from each run's own start
  }
}

TEST(KernelShell, WatchdogStopsBeforeAnEventPastTheLimit) {
  EventQueue q;
  int ran = 0;
  q.at(10, [&] { ++ran; });
  q.at(100, [&] { ++ran; });
  EXPECT_EQ(run_on_kernel(q, 667, 50), KernelStop::Watchdog);
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(q.empty());
}

TEST(KernelShell, AnExceptionInAnEventComesBackFromTheRun) {
  EventQueue q;
  q.at(3, [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(run_on_kernel(q, 667, 0), std::runtime_error);
  EventQueue again;  // and the kernel still works afterwards
  bool ran = false;
  again.at(7, [&] { ran = true; });
  run_on_kernel(again, 667, 0);
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace spyre::sim
