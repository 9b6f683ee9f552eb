#pragma once
// Host fallback (`compiler.host_fallback=on`, off by default): an op Inductor leaves to an ATen
// kernel (a fallback node) that spyre-sim has no lowering for runs on the host, as torch-spyre
// does. Its kernel is one `host.call` on core 0 between two chip-wide barriers (the other
// cores wait at the second): the inputs cross the host link from device memory, the host
// computes, the outputs cross back (timing: arch/unit_timing.h host_call_cycles). The report
// entry's `host_call` describes the call for the host (spyre_sim/host_fallback.py): the ATen
// overload, its arguments in schema order with tensors as {"input": i}, each input and output
// with dtype, size, stride and device-memory address (outputs with their index into a tuple
// result), the inputs it updates in place, and the bytes each way.
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct Kernel;

// True when `n` is a fallback node that runs on the host under this option: not a MultiOutput
// view, and no on-chip lowering (select.h).
bool runs_on_host(const ir::Node& n, bool host_fallback);

void lower_host_call(Kernel& k);

}  // namespace spyre::compiler
