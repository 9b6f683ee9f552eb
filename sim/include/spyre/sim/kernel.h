#pragma once
// The SystemC kernel shell. One sc_module is elaborated lazily on the first run in a process
// and reused for every later run (SystemC 2.3 elaborates once per process). Its SC_METHOD is
// triggered by one sc_event: it runs every event of the EventQueue due at the next cycle,
// then re-notifies itself after (next cycle - this cycle) * period. sc_start() returns on
// starvation (no sc_stop), so the kernel can be entered again by the next run.
// Not reentrant: runs are serialised by a process-wide mutex.
#include <cstdint>

#include "spyre/sim/scheduler.h"

namespace spyre::sim {

enum class KernelStop { Drained, Watchdog };

// Runs `q` to completion on the SystemC kernel. Stops early (returns Watchdog, events left
// in q) when the next event lies beyond `max_cycles` (0: no limit). An exception thrown by an
// event is caught inside the kernel and rethrown here after sc_start returns.
KernelStop run_on_kernel(EventQueue& q, double period_ps, uint64_t max_cycles);

}  // namespace spyre::sim
