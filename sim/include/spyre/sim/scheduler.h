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
// EventQueue is the implementation: a ring of per-cycle buckets for the near future over a
// 4-ary heap of keys for the rest, the callbacks in a slab. It runs
// standalone (run_all, for unit tests) or under the SystemC kernel (EventDriver, kernel.h), which
// calls run_next_cycle() once per activation.
#include <cstdint>
#include <memory>
#include <vector>

#include "spyre/sim/callback.h"

namespace spyre::sim {

using Cycle = uint64_t;

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Cycle now() const = 0;
  virtual void at(Cycle c, Callback fn) = 0;
  virtual void at_end_of(Cycle c, Callback fn) = 0;
};

class EventQueue : public Scheduler {
 public:
  Cycle now() const override { return now_; }
  void at(Cycle c, Callback fn) override { push(c, false, std::move(fn)); }
  void at_end_of(Cycle c, Callback fn) override { push(c, true, std::move(fn)); }

  bool empty() const { return near_ == 0 && heap_.empty(); }
  Cycle next_cycle() const;  // only when !empty()
  // Advances now() to next_cycle() and runs every event due then (also those added for it).
  void run_next_cycle();
  void run_all();  // until empty (no SystemC): for tests of plain components
  void clear();
  uint64_t events_run() const { return events_run_; }  // callbacks run so far: the model's work

 private:
  // Events of the next kWindow cycles [base_, base_ + kWindow) wait in a ring of buckets, one
  // per cycle, each a FIFO of plain and one of late events (so a same-cycle or near event
  // costs an append, not a heap operation); later ones in a 4-ary heap of plain keys, moved
  // into their bucket when the window reaches them. Every heap event is later than every
  // bucketed one, and it reaches its bucket before any event scheduled directly there, so
  // each bucket stays in scheduling order. The callbacks stay put in a slab.
  static constexpr size_t kWindow = 1024;  // cycles; a power of two
  struct Key {
    Cycle cycle;
    uint64_t order;  // the late flag in the top bit over the sequence number
    uint32_t slot;
  };
  struct Bucket {
    std::vector<uint32_t> plain, late;
    size_t plain_head = 0, late_head = 0;
  };
  static constexpr uint64_t kLate = uint64_t{1} << 63;
  void push(Cycle c, bool late, Callback&& fn);
  void place(Cycle c, bool late, uint32_t slot);  // into its bucket (c in the window)
  Key pop_heap();
  void run_slot(uint32_t slot);

  Cycle now_ = 0;
  Cycle base_ = 0;  // first cycle of the window (never after now_)
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  size_t near_ = 0;  // events in buckets
  std::vector<Bucket> buckets_ = std::vector<Bucket>(kWindow);
  std::vector<uint64_t> busy_ = std::vector<uint64_t>(kWindow / 64);  // non-empty buckets
  std::vector<Key> heap_;  // 4-ary min-heap on (cycle, order)
  // The slab in chunks that never move, so a callback runs where it lies (one that schedules
  // more events may add a chunk) and each event moves its callback once, into its slot.
  static constexpr uint32_t kChunkBits = 10;
  Callback& slot_of(uint32_t slot) {
    return chunks_[slot >> kChunkBits][slot & ((uint32_t{1} << kChunkBits) - 1)];
  }
  std::vector<std::unique_ptr<Callback[]>> chunks_;
  uint32_t slots_ = 0;  // slots ever handed out
  std::vector<uint32_t> free_;
};

}  // namespace spyre::sim
