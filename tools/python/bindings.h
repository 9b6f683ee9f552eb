#pragma once
// The `spyre_sim_core` Python module: one definition, used by the extension module that
// `import spyre_sim` loads and by the module the CLI embeds. Only plain data crosses the
// boundary (bytes, str, JSON text), never objects torch would have to understand.
#include <pybind11/pybind11.h>

#include "spyre/runner/runner.h"

namespace spyre::python {
void bind_core(pybind11::module_& m);

// RunOptions::host from a Python callable host(call_json: str, dram: memoryview).
runner::HostFn host_callback(pybind11::object host);
}  // namespace spyre::python
