#include "spyre/sim/scheduler.h"

#include <algorithm>
#include <string>

#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {

constexpr size_t kArity = 4;

template <class K>
bool before(const K& a, const K& b) {
  return a.cycle != b.cycle ? a.cycle < b.cycle : a.order < b.order;
}

}  // namespace

void EventQueue::push(Cycle c, uint8_t late, std::function<void()> fn) {
  if (c < now_)
    SPYRE_FAIL("spyre/kernel/causality", "scheduler",
               "an event for cycle " + std::to_string(c) + " was scheduled at cycle " +
                   std::to_string(now_) + " (the past)");
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    slab_[slot] = std::move(fn);
  } else {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.push_back(std::move(fn));
  }
  const Key k{c, (late ? kLate : 0) | seq_++, slot};
  size_t i = heap_.size();
  heap_.push_back(k);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!before(k, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

EventQueue::Key EventQueue::pop() {
  const Key top = heap_.front();
  const Key last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + kArity, n);
    for (size_t j = first + 1; j < end; ++j)
      if (before(heap_[j], heap_[best])) best = j;
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

void EventQueue::run_next_cycle() {
  if (heap_.empty()) return;
  now_ = heap_.front().cycle;
  while (!heap_.empty() && heap_.front().cycle == now_) {
    const uint32_t slot = pop().slot;
    // The callback may schedule more events (and so grow the slab): move it out first.
    std::function<void()> fn = std::move(slab_[slot]);
    slab_[slot] = nullptr;
    free_.push_back(slot);
    ++events_run_;
    fn();
  }
}

void EventQueue::run_all() {
  while (!heap_.empty()) run_next_cycle();
}

void EventQueue::clear() {
  heap_.clear();
  slab_.clear();
  free_.clear();
}

}  // namespace spyre::sim
