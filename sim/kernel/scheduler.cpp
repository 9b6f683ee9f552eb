#include "spyre/sim/scheduler.h"

#include <string>

#include "spyre/sim/report.h"

namespace spyre::sim {

void EventQueue::push(Cycle c, uint8_t late, std::function<void()> fn) {
  if (c < now_)
    SPYRE_FAIL("spyre/kernel/causality", "scheduler",
               "an event for cycle " + std::to_string(c) + " was scheduled at cycle " +
                   std::to_string(now_) + " (the past)");
  heap_.push(Event{c, late, seq_++, std::move(fn)});
}

void EventQueue::run_next_cycle() {
  if (heap_.empty()) return;
  now_ = heap_.top().cycle;
  while (!heap_.empty() && heap_.top().cycle == now_) {
    // top() is const; the event is popped right after, so moving its callback out is safe.
    std::function<void()> fn = std::move(const_cast<Event&>(heap_.top()).fn);
    heap_.pop();
    ++events_run_;
    fn();
  }
}

void EventQueue::run_all() {
  while (!heap_.empty()) run_next_cycle();
}

void EventQueue::clear() { heap_ = {}; }

}  // namespace spyre::sim
