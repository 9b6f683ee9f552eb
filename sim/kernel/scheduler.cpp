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

void EventQueue::push(Cycle c, bool late, Callback&& fn) {
  if (c < now_)
    SPYRE_FAIL("spyre/kernel/causality", "scheduler",
               "an event for cycle " + std::to_string(c) + " was scheduled at cycle " +
                   std::to_string(now_) + " (the past)");
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = slots_++;
    if ((slot >> kChunkBits) >= chunks_.size())
      chunks_.push_back(std::make_unique<Callback[]>(size_t{1} << kChunkBits));
  }
  slot_of(slot) = std::move(fn);
  const uint64_t seq = seq_++;
  if (c - base_ < kWindow) return place(c, late, slot);
  const Key k{c, (late ? kLate : 0) | seq, slot};
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

void EventQueue::place(Cycle c, bool late, uint32_t slot) {
  const size_t b = static_cast<size_t>(c) & (kWindow - 1);
  (late ? buckets_[b].late : buckets_[b].plain).push_back(slot);
  busy_[b / 64] |= uint64_t{1} << (b % 64);
  ++near_;
}

EventQueue::Key EventQueue::pop_heap() {
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

Cycle EventQueue::next_cycle() const {
  if (near_ == 0) return heap_.front().cycle;
  // The first busy bucket at or after base_'s, going round the ring.
  const size_t start = static_cast<size_t>(base_) & (kWindow - 1);
  const size_t words = busy_.size();
  for (size_t k = 0; k <= words; ++k) {
    const size_t w = (start / 64 + k) % words;
    uint64_t bits = busy_[w];
    if (k == 0) bits &= ~uint64_t{0} << (start % 64);           // this word: from start on
    if (k == words) bits &= (uint64_t{1} << (start % 64)) - 1;  // back round: before start
    if (bits == 0) continue;
    const size_t b = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
    return base_ + ((b - start) & (kWindow - 1));
  }
  return base_;  // unreachable: near_ > 0 means some bucket is busy
}

void EventQueue::run_slot(uint32_t slot) {
  // The callback runs in its slot (chunks never move); the slot is freed after it returns, so
  // the events it schedules take other slots.
  --near_;
  ++events_run_;
  Callback& fn = slot_of(slot);
  fn();
  fn = nullptr;
  free_.push_back(slot);
}

void EventQueue::run_next_cycle() {
  if (empty()) return;
  const Cycle c = next_cycle();
  base_ = now_ = c;
  while (!heap_.empty() && heap_.front().cycle - base_ < kWindow) {
    const Key k = pop_heap();
    place(k.cycle, (k.order & kLate) != 0, k.slot);
  }
  const size_t bi = static_cast<size_t>(c) & (kWindow - 1);
  Bucket& b = buckets_[bi];  // the ring never grows: the reference stays valid
  for (;;) {
    if (b.plain_head < b.plain.size())
      run_slot(b.plain[b.plain_head++]);
    else if (b.late_head < b.late.size())
      run_slot(b.late[b.late_head++]);
    else
      break;
  }
  b.plain.clear();
  b.late.clear();
  b.plain_head = b.late_head = 0;
  busy_[bi / 64] &= ~(uint64_t{1} << (bi % 64));
}

void EventQueue::run_all() {
  while (!empty()) run_next_cycle();
}

void EventQueue::clear() {
  for (Bucket& b : buckets_) b = Bucket{};
  std::fill(busy_.begin(), busy_.end(), 0);
  near_ = 0;
  heap_.clear();
  chunks_.clear();
  slots_ = 0;
  free_.clear();
}

}  // namespace spyre::sim
