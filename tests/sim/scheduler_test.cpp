// The event queue and the kernel shell on their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <systemc>

#include "spyre/error.h"

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

// The contract run literally: a sorted set of (cycle, plain before late, scheduling order),
// the smallest taken one at a time, so events added while a cycle runs join it.
class ReferenceQueue {
 public:
  Cycle now() const { return now_; }
  void add(Cycle c, bool late, std::function<void()> fn) {
    fns_.push_back(std::move(fn));
    set_.insert({c, late, fns_.size() - 1});
  }
  void run_all() {
    while (!set_.empty()) {
      const auto [c, late, seq] = *set_.begin();
      set_.erase(set_.begin());
      now_ = c;
      fns_[seq]();
    }
  }

 private:
  Cycle now_ = 0;
  std::set<std::tuple<Cycle, bool, size_t>> set_;
  std::vector<std::function<void()>> fns_;
};

// Events schedule more at random distances, from the same cycle to far past EventQueue's
// near-future window, so bucketed, heaped and migrated events meet in one cycle. Returns the
// (cycle, event) order they ran in.
template <class Q, class Add>
std::vector<std::pair<Cycle, size_t>> random_run(Q& q, Add add) {
  std::vector<std::pair<Cycle, size_t>> ran;
  size_t made = 0;
  uint64_t rng = 12345;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
  };
  auto gap = [&next]() -> Cycle {  // same cycle, near, about the window, far
    const uint64_t kind = next() % 8;
    return kind < 2 ? 0 : kind < 5 ? next() % 64 : kind < 7 ? next() % 3000 : 100000;
  };
  std::function<void(Cycle)> spawn = [&](Cycle at) {
    const size_t id = made++;
    add(at, next() % 3 == 0, [&, id] {
      ran.push_back({q.now(), id});
      if (made < 20000)
        for (uint64_t k = 1 + next() % 2; k > 0; --k) spawn(q.now() + gap());
    });
  };
  for (int i = 0; i < 50; ++i) spawn(gap());
  q.run_all();
  return ran;
}

TEST(EventQueue, RunsInContractOrderAcrossTheNearFutureWindow) {
  EventQueue q;
  const auto got = random_run(q, [&q](Cycle c, bool late, std::function<void()> fn) {
    late ? q.at_end_of(c, std::move(fn)) : q.at(c, std::move(fn));
  });
  ReferenceQueue r;
  const auto want = random_run(
      r, [&r](Cycle c, bool late, std::function<void()> fn) { r.add(c, late, std::move(fn)); });
  ASSERT_GE(want.size(), 20000u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "the " << i << "th event run";
  EXPECT_EQ(q.events_run(), got.size());
  EXPECT_GT(want.back().first, 1024u * 50);  // the run crossed the window many times
}

// Runs `q` under a fresh context and driver (as simulate() does); returns the driver's stop.
KernelStop run_driven(EventQueue& q, uint64_t max_cycles = 0, double ghz = 1.5) {
  SimContext ctx;
  EventDriver d("sched", q, TimeBase(ghz), max_cycles);
  return d.run();
}

TEST(TimeBase, EveryCycleIsWithinHalfAPicosecondAndInvertsExactly) {
  const TimeBase tb(1.5);  // 666.67 ps: no whole-ps period
  EXPECT_EQ(tb.ps_of(0), 0u);
  EXPECT_EQ(tb.ps_of(1), 667u);
  EXPECT_EQ(tb.ps_of(2), 1333u);
  EXPECT_EQ(tb.ps_of(3), 2000u);
  for (Cycle c : {Cycle{0}, Cycle{1}, Cycle{2}, Cycle{7}, Cycle{1'000'003}, Cycle{1} << 40,
                  Cycle{3'000'000'000'000}, Cycle{27'000'000'000'001}}) {
    const long double exact = static_cast<long double>(c) * 1000.0L / 1.5L;
    EXPECT_LE(std::fabs(static_cast<long double>(tb.ps_of(c)) - exact), 0.5L) << c;
    EXPECT_EQ(tb.cycle_at_or_after(tb.ps_of(c)), c) << c;
    EXPECT_EQ(tb.cycle_at_or_after(tb.ps_of(c) + 1), c + 1) << c;
    if (c > 0) {
      EXPECT_EQ(tb.cycle_at_or_after(tb.ps_of(c) - 1), c) << c;
    }
  }
  EXPECT_THROW(TimeBase(0.0), Error);
}

// ps_of divides by the clock in kHz with a multiply and a shift below 2^63 (kernel.h): it gives
// round(c * 1e9 / f_kHz) half up, the 128-bit division's value, at clocks whose kHz is a power
// of two, one more, one less, odd and large, for cycles around every power of two up to the
// fast path's end and random ones, the boundary itself and beyond it.
TEST(TimeBase, PsOfIsTheExactQuotientAtEveryClockAndCycle) {
  using u128 = unsigned __int128;
  int checked = 0;
  for (double ghz :
       {1.15, 1.5, 0.94, 0.000001, 0.001024, 0.001025, 0.001023, 3.999999, 999.999, 1000.0}) {
    const TimeBase tb(ghz);
    const uint64_t k = tb.khz();
    auto exact = [k](Cycle c) {
      return static_cast<uint64_t>((static_cast<u128>(c) * 1'000'000'000u + k / 2) / k);
    };
    std::vector<Cycle> cs;
    for (int b = 0; b < 34; ++b)
      for (int64_t d = -3; d <= 3; ++d) cs.push_back((Cycle{1} << b) + static_cast<Cycle>(d));
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 3000; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      cs.push_back(x % 9'200'000'000ull);
    }
    // The fast path ends where c * 1e9 + k / 2 reaches 2^63; the cycles around it and far past.
    const Cycle edge = static_cast<Cycle>(((u128{1} << 63) - k / 2) / 1'000'000'000u);
    for (int64_t d = -3; d <= 3; ++d) cs.push_back(edge + static_cast<Cycle>(d));
    cs.push_back(Cycle{1} << 40);
    for (Cycle c : cs) {
      if (c > (Cycle{1} << 60)) continue;  // the -3 around 2^0
      ASSERT_EQ(tb.ps_of(c), exact(c)) << ghz << " GHz, cycle " << c;
      ++checked;
    }
  }
  EXPECT_GT(checked, 30000);
}

TEST(EventDriver, RunsTheQueueOnSystemCInAFreshContextPerRun) {
  for (int run = 0; run < 3; ++run) {
    EventQueue q;
    std::string log;
    q.at(0, [&] { log += "0"; });
    q.at(1000, [&] {
      log += "1";
      q.at(1500, [&] {
        log += "2";
        EXPECT_EQ(sc_core::sc_time_stamp(), TimeBase(1.5).time_of(1500));
      });
    });
    EXPECT_EQ(run_driven(q), KernelStop::Drained);
    EXPECT_EQ(log, "012");
    EXPECT_EQ(q.now(), 1500u);  // cycles count from each run's own start
  }
}

TEST(EventDriver, SystemCTimeAndCyclesAgreeAfterALongIdleGapWithoutTicking) {
  // 2e12 cycles (22 minutes of chip time) idle between two events: two activations, and
  // sc_time is exactly the time of the last cycle (no drift from a rounded period).
  EventQueue q;
  int activations = 0;
  const Cycle far = 2'000'000'000'000;
  sc_core::sc_time end;
  q.at(1, [&] { ++activations; });
  q.at(far, [&] {
    ++activations;
    end = sc_core::sc_time_stamp();
  });
  run_driven(q);
  EXPECT_EQ(activations, 2);
  EXPECT_EQ(end.value(), TimeBase(1.5).ps_of(far));
  EXPECT_EQ(end.value(), 1'333'333'333'333'333u);  // 2e12 * 666.666.. ps, rounded
}

TEST(EventDriver, WatchdogStopsBeforeAnEventPastTheLimit) {
  EventQueue q;
  int ran = 0;
  q.at(10, [&] { ++ran; });
  q.at(100, [&] { ++ran; });
  EXPECT_EQ(run_driven(q, 50), KernelStop::Watchdog);
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(q.empty());
}

TEST(EventDriver, AnExceptionInAnEventComesBackFromTheRun) {
  EventQueue q;
  q.at(3, [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(run_driven(q), std::runtime_error);
  EventQueue again;  // and the next run works
  bool ran = false;
  again.at(7, [&] { ran = true; });
  run_driven(again);
  EXPECT_TRUE(ran);
}

TEST(EventDriver, AnEventIntoThePastIsACausalityErrorThroughScReport) {
  const int before = sc_core::sc_report_handler::get_count("spyre/kernel/causality");
  EventQueue q;
  q.at(5, [&] { q.at(3, [] {}); });
  try {
    run_driven(q);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle 3 was scheduled at cycle 5"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(sc_core::sc_report_handler::get_count("spyre/kernel/causality"), before + 1);
  // without the kernel too: the plain queue never clamps
  EventQueue plain;
  plain.at(5, [&] { plain.at(4, [] {}); });
  EXPECT_THROW(plain.run_all(), Error);
}

// Another process adds an event between two cycles: it runs at the next cycle boundary.
struct Poker : sc_core::sc_module {
  SC_HAS_PROCESS(Poker);
  Poker(const sc_core::sc_module_name& n, EventDriver& d, std::vector<Cycle>& log)
      : sc_core::sc_module(n), d_(d), log_(log) {
    SC_METHOD(poke);
    dont_initialize();
    sensitive << e_;
  }
  void start_of_simulation() override { e_.notify(sc_core::sc_time(1000.3, sc_core::SC_NS)); }
  void poke() {
    const Cycle c = d_.time_base().cycle_at_or_after(sc_core::sc_time_stamp());
    d_.queue().at(c, [this] { log_.push_back(d_.queue().now()); });
    d_.wake();
  }
  EventDriver& d_;
  std::vector<Cycle>& log_;
  sc_core::sc_event e_;
};

TEST(EventDriver, AnotherProcessWakesItAtTheNextCycleBoundary) {
  SimContext ctx;
  EventQueue q;
  std::vector<Cycle> log;
  q.at(5000, [&] { log.push_back(q.now()); });  // later than the poke
  EventDriver d("sched", q, TimeBase(1.5), 0);
  Poker p("poker", d, log);
  d.run();
  // 1000.3 ns = 1500.45 cycles: the next boundary is cycle 1501
  EXPECT_EQ(log, (std::vector<Cycle>{1501, 5000}));
}

}  // namespace
}  // namespace spyre::sim

namespace spyre::sim {
namespace {

// Callback keeps small callables in place and larger ones on the heap; either moves, runs once
// per call, is destroyed exactly once, and an empty one throws as std::function does.
TEST(Callback, SmallAndLargeCallablesMoveRunAndAreDestroyedOnce) {
  auto alive = std::make_shared<int>(0);
  int runs = 0;
  {
    std::array<int64_t, 2> small{1, 2};
    std::array<int64_t, 16> large{};  // 128 bytes: over Callback::kInline
    large[15] = 40;
    Callback a([alive, small, &runs] { runs += static_cast<int>(small[1]); });
    Callback b([alive, large, &runs] { runs += static_cast<int>(large[15]); });
    EXPECT_EQ(alive.use_count(), 3);
    Callback c = std::move(a);
    EXPECT_FALSE(static_cast<bool>(a));
    c();
    b();
    Callback d;
    d = std::move(b);
    d();
    EXPECT_EQ(runs, 82);
    EXPECT_EQ(alive.use_count(), 3);
    c = nullptr;
    EXPECT_EQ(alive.use_count(), 2);
    EXPECT_THROW(a(), std::bad_function_call);
  }
  EXPECT_EQ(alive.use_count(), 1);
  // Events keep their order with callbacks of every size.
  EventQueue q;
  std::vector<int> order;
  std::array<int64_t, 16> pad{};
  q.at(5, [&order, pad] { order.push_back(static_cast<int>(pad[0]) + 2); });
  q.at(5, [&order] { order.push_back(3); });
  q.at(1, [&order, pad] { order.push_back(static_cast<int>(pad[0]) + 1); });
  q.run_all();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

}  // namespace
}  // namespace spyre::sim
