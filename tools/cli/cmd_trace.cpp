// `spyre-sim trace <report|view|validate> ...`: the trace tools are Python (spyre_sim.trace,
// plotting needs bokeh), so this forwards the arguments to spyre_sim.trace.cli.main in the
// embedded interpreter and returns its exit status.
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <iostream>

#include "commands.h"
#include "spyre/error.h"

namespace py = pybind11;

namespace spyre::cli {

int trace_command(const std::vector<std::string>& args, bool debug) {
  start_embedded_python();
  auto flush = [] {
    // main() leaves with _exit, which would drop what Python still buffers.
    auto sys = py::module_::import("sys");
    sys.attr("stdout").attr("flush")();
    sys.attr("stderr").attr("flush")();
  };
  try {
    auto cli = py::module_::import("spyre_sim.trace.cli");
    int code = cli.attr("main")(args).cast<int>();
    flush();
    return code;
  } catch (py::error_already_set& e) {
    if (debug) py::module_::import("traceback").attr("print_exception")(e.value());
    std::string type = py::str(e.type().attr("__name__"));
    std::string msg = py::str(e.value());
    flush();
    throw std::runtime_error("spyre_sim.trace: " + type + ": " + msg +
                             (debug ? "" : " (rerun with --debug for the traceback)"));
  }
}

}  // namespace spyre::cli
