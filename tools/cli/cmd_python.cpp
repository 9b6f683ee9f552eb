// The subcommands written in Python (`trace`, `regress`, `sweep`, `llm`, `script`): the arguments
// after the subcommand go to `main(args)` of its module in the embedded interpreter, which returns
// the exit status. Only `import spyre_sim` (lazy) happens first, so these commands pay for
// `import torch` only when they need it.
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <iostream>

#include "commands.h"
#include "spyre/error.h"

namespace py = pybind11;

namespace spyre::cli {

int python_command(const std::string& module, const std::vector<std::string>& args,
                   const std::vector<std::string>& command, bool debug) {
  start_embedded_python();
  auto flush = [] {
    // main() leaves with _exit, which would drop what Python still buffers.
    auto sys = py::module_::import("sys");
    sys.attr("stdout").attr("flush")();
    sys.attr("stderr").attr("flush")();
  };
  try {
    py::module_::import("spyre_sim.provenance").attr("set_command_line")(command);
    auto mod = py::module_::import(module.c_str());
    int code = mod.attr("main")(args).cast<int>();
    flush();
    return code;
  } catch (py::error_already_set& e) {
    if (debug) py::module_::import("traceback").attr("print_exception")(e.value());
    std::string type = py::str(e.type().attr("__name__"));
    std::string msg = py::str(e.value());
    flush();
    throw std::runtime_error(module + ": " + type + ": " + msg +
                             (debug ? "" : " (rerun with --debug for the traceback)"));
  }
}

}  // namespace spyre::cli
