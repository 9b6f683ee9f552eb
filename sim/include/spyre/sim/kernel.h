#pragma once
// The SystemC side of the time base: how cycles map to sc_time, a fresh simulation context
// per run, and the process that runs a chip's event queue on the kernel.
//
// Time rule: cycle c happens at sc_time round(c * 1e9 / f_kHz) ps, computed from c every time
// (never accumulated), f_kHz = round(clock_ghz * 1e6). The period of 1.5 GHz is 666.67 ps, not
// a whole number of ps; with this rule the error of any cycle's time is under 0.5 ps however
// long the run, distinct cycles have distinct times (f_kHz <= 1e9, i.e. up to 1 THz), and
// cycle_at_or_after() inverts it exactly. The SystemC time resolution must be 1 ps (SimContext
// sets it; a user's own sc_main has it by default).
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>

#include <systemc>

#include "spyre/sim/scheduler.h"

namespace spyre::sim {

class TimeBase {
 public:
  // Throws spyre::Error("chip.clock_ghz", ...) outside (0, 1000] GHz.
  explicit TimeBase(double clock_ghz);
  uint64_t ps_of(Cycle c) const;               // round(c * 1e9 / f_kHz), half up
  Cycle cycle_at_or_after(uint64_t ps) const;  // the least c with ps_of(c) >= ps
  sc_core::sc_time time_of(Cycle c) const;     // ps_of(c) as sc_time
  Cycle cycle_at_or_after(const sc_core::sc_time& t) const;
  uint64_t khz() const { return khz_; }

 private:
  uint64_t khz_;
  // ps_of's division by khz_ as a multiply and shift (every DRAM transaction converts a time):
  // magic_ = ceil(2^(64+shift_) / khz_), shift_ = ceil(log2 khz_), exact for numerators below
  // 2^63 (driver.cpp).
  unsigned __int128 magic_ = 0;
  int shift_ = 0;
};

// A fresh SystemC simulation context for one run, made current for the object's lifetime
// (the previous one is restored after). SystemC 2.3 elaborates once per context, so each run
// elaborates its own chip in its own context; every sc_object of the run must be destroyed
// before the context is. Holds a process-wide lock: one context is current at a time.
class SimContext {
 public:
  SimContext();
  ~SimContext();
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
  sc_core::sc_simcontext* prev_;
  std::unique_ptr<sc_core::sc_simcontext> ctx_;
};

enum class KernelStop { Drained, Watchdog };

// Runs an EventQueue on the kernel: one SC_METHOD, woken by one sc_event at the time of the
// queue's next cycle; it runs every event of that cycle and notifies itself for the next one.
// Nothing ticks when idle; sc_start() returns on starvation. An event for a cycle before now
// is a causality error (spyre/kernel/causality, from EventQueue). Another process (a TLM target
// of the user's) that adds events calls wake() afterwards.
class EventDriver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EventDriver);
  // Stops (Watchdog, events left) when the next event lies beyond max_cycles (0: no limit).
  EventDriver(const sc_core::sc_module_name& name, EventQueue& q, TimeBase tb, uint64_t max_cycles);
  const TimeBase& time_base() const { return tb_; }
  EventQueue& queue() { return q_; }
  // True while this driver runs a cycle's events (sc_time_stamp() is then time_of(now)).
  bool in_cycle() const { return in_cycle_; }
  // The queue got an event from outside the driver's process: wake at its next cycle.
  void wake();
  KernelStop stop() const { return stop_; }
  // Times the SystemC kernel ran this driver's process (one per simulated cycle with events,
  // plus early wake-ups): with EventQueue::events_run(), what a run cost the kernel.
  uint64_t activations() const { return activations_; }
  // sc_start(), then rethrows an exception an event threw (the simulation is stopped then).
  KernelStop run();

 private:
  void start_of_simulation() override;
  void activate();
  void notify_next();

  EventQueue& q_;
  TimeBase tb_;
  uint64_t max_cycles_;
  sc_core::sc_event wake_;
  bool in_cycle_ = false;
  bool stopped_ = false;
  uint64_t activations_ = 0;
  KernelStop stop_ = KernelStop::Drained;
  std::exception_ptr error_;
};

}  // namespace spyre::sim
