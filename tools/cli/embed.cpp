// The embedded Python interpreter of the CLI: the project's .venv, started once, never
// finalised (finalising after `import torch` is known to crash), with Ctrl-C left to us.
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "../python/bindings.h"
#include "commands.h"
#include "spyre/error.h"

#ifndef SPYRE_VENV_DIR
#error "SPYRE_VENV_DIR must name the project's virtual environment"
#endif

namespace py = pybind11;

PYBIND11_EMBEDDED_MODULE(spyre_sim_core, m) { spyre::python::bind_core(m); }

namespace spyre::cli {

namespace {

void start_interpreter() {
  static py::scoped_interpreter* interp = nullptr;
  if (interp) return;
  // SPYRE_SIM_VENV (the installed `spyre-sim` command sets it), else the checkout's .venv
  // (empty in a wheel's build: nothing of the source tree is compiled in).
  const char* env = std::getenv("SPYRE_SIM_VENV");
  std::string venv = env ? env : SPYRE_VENV_DIR;
  if (venv.empty())
    throw Error("SPYRE_SIM_VENV",
                "not set: start this program through the `spyre-sim` command of its Python "
                "environment, or set SPYRE_SIM_VENV to that environment");
  std::string python = venv + "/bin/python";
  if (!std::filesystem::exists(python))
    throw Error(venv,
                "the Python environment is missing; run `make build` (or set SPYRE_SIM_VENV)");
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  PyConfig_SetBytesString(&config, &config.program_name, python.c_str());
  interp = new py::scoped_interpreter(&config);  // deliberately never deleted
  auto sys = py::module_::import("sys");
  auto vi = sys.attr("version_info");
  if (vi.attr("major").cast<int>() != PY_MAJOR_VERSION ||
      vi.attr("minor").cast<int>() != PY_MINOR_VERSION)
    throw Error(venv, "Python version differs from the one spyre-sim was built with");
}

}  // namespace

void start_embedded_python() { start_interpreter(); }

runner::HostFn embedded_host() {
  return [](const nlohmann::json& call, uint8_t* dram, uint64_t bytes) {
    start_interpreter();
    static py::object execute;  // deliberately never released (the interpreter is not either)
    if (!execute) execute = py::module_::import("spyre_sim.host_fallback").attr("execute");
    spyre::python::host_callback(execute)(call, dram, bytes);
  };
}

ModelRun run_model_file(const RunArgs& a, const std::string& trace, const std::string& out) {
  start_interpreter();
  try {
    auto cli = py::module_::import("spyre_sim._cli");
    py::tuple r = cli.attr("run_model_file")(a.target, a.arch, a.sets, trace, out, a.timing_only,
                                             a.trace_filter, a.trace_detail, !a.no_cache);
    return ModelRun{r[0].cast<std::string>(), r[1].cast<std::string>(), r[2].cast<std::string>(),
                    r[3].cast<int>(),         r[4].cast<int>(),         r[5].cast<std::string>()};
  } catch (py::error_already_set& e) {
    if (a.debug) {
      py::module_::import("traceback").attr("print_exception")(e.value());
      std::cerr.flush();
    }
    std::string type = py::str(e.type().attr("__name__"));
    std::string msg = py::str(e.value());
    if (type == "ModelFileRaised") throw ModelFileRaised(msg);
    bool ours = type == "SpyreError" || type == "CaptureError" || type == "UnsupportedTorch" ||
                type == "ModelFileError";
    throw Error(ours ? "" : a.target,
                ours ? msg : type + ": " + msg + " (rerun with --debug for the traceback)");
  }
}

}  // namespace spyre::cli
