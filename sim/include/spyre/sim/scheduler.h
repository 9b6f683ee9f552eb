#pragma once
// The scheduler the model components run on. Time is in core-clock cycles counted from the
// start of the run. Components never tick: they ask to be called at the cycle where something
// changes. Contract:
//   - at(c, fn): fn runs at cycle c. Events of one cycle run in the order they were scheduled
//     (FIFO by a sequence number), so a run is deterministic. c < now() is a causality error
//     (sc_report spyre/kernel/causality, then spyre::Error), never moved to now.
//   - at_end_of(c, fn): fn runs at cycle c after every plain event of that cycle, including
//     those scheduled while the cycle runs (used by arbiters that must see all of a cycle's
//     requests before ordering them).
// EventQueue is the implementation: a 4-ary heap of keys over a slab of callbacks. It runs
// standalone (run_all, for unit tests) or under the SystemC kernel (EventDriver, kernel.h), which
// calls run_next_cycle() once per activation.
#include <cstdint>
#include <functional>
#include <vector>

namespace spyre::sim {

using Cycle = uint64_t;

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Cycle now() const = 0;
  virtual void at(Cycle c, std::function<void()> fn) = 0;
  virtual void at_end_of(Cycle c, std::function<void()> fn) = 0;
};

class EventQueue : public Scheduler {
 public:
  Cycle now() const override { return now_; }
  void at(Cycle c, std::function<void()> fn) override { push(c, 0, std::move(fn)); }
  void at_end_of(Cycle c, std::function<void()> fn) override { push(c, 1, std::move(fn)); }

  bool empty() const { return heap_.empty(); }
  Cycle next_cycle() const { return heap_.front().cycle; }  // only when !empty()
  // Advances now() to next_cycle() and runs every event due then (also those added for it).
  void run_next_cycle();
  void run_all();  // until empty (no SystemC): for tests of plain components
  void clear();
  uint64_t events_run() const { return events_run_; }  // callbacks run so far: the model's work

 private:
  // The heap holds plain keys; the callbacks stay put in a slab (a heap of std::function
  // would move each callback log2(n) times per push and pop). `order` is the late flag in the
  // top bit over the sequence number: (cycle, order) sorts by cycle, then plain before late,
  // then by scheduling order.
  struct Key {
    Cycle cycle;
    uint64_t order;
    uint32_t slot;
  };
  static constexpr uint64_t kLate = uint64_t{1} << 63;
  void push(Cycle c, uint8_t late, std::function<void()> fn);
  Key pop();

  Cycle now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  std::vector<Key> heap_;  // 4-ary min-heap on (cycle, order)
  std::vector<std::function<void()>> slab_;
  std::vector<uint32_t> free_;
};

}  // namespace spyre::sim
