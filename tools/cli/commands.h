#pragma once
// The spyre-sim subcommands. Each returns the process exit status: 0 ok, 1 a failed check,
// 2 bad input (spyre::Error and friends are turned into 2 by main()).
#include <stdexcept>
#include <string>
#include <vector>

#include "spyre/runner/runner.h"

namespace spyre::cli {

struct RunArgs {
  std::string target;
  std::string arch = "spyre";
  std::vector<std::string> sets;
  std::string trace;                     // empty: <out>/trace.pftrace
  std::string trace_filter;              // --trace-filter (traces/filter.h); empty: everything
  std::string trace_detail = "summary";  // --trace-detail: summary | full (traces/sink.h)
  bool no_trace = false;                 // --no-trace: write none
  std::string out;                       // empty: spyre-sim-out/<target stem>
  bool json = false;
  bool timing_only = false;
  bool no_cache = false;  // --no-cache: compile even when the program cache has the result
  bool debug = false;
  std::string program = "spyre-sim";  // argv[0]: how the printed follow-up commands call us
  std::vector<std::string> command;   // the whole command line, for provenance.json
};

int run_command(const RunArgs& a);
int asm_command(const std::string& in, const std::string& out);
int disasm_command(const std::string& in, const std::string& out);
int compile_command(const std::string& in, const std::string& out, const std::string& report,
                    const std::string& arch, const std::vector<std::string>& sets);
int arch_show_command(const std::string& name, const std::vector<std::string>& sets);
int arch_list_command();
int isa_doc_command();
// `trace|regress|sweep|script ARGS...`: runs `module`.main(ARGS) in the embedded interpreter
// (spyre_sim.trace.cli, spyre_sim.regression, spyre_sim.sweeps.cli, spyre_sim.script) and returns
// its exit status. `command` is the whole command line (the tools record it as provenance).
int python_command(const std::string& module, const std::vector<std::string>& args,
                   const std::vector<std::string>& command, bool debug);
// Starts the embedded .venv interpreter once (embed.cpp).
void start_embedded_python();
// The host of host fallbacks in functional runs (spyre_sim.host_fallback in the embedded
// interpreter, started on the first call).
runner::HostFn embedded_host();

// Runs a model file (Python defining `model` and `example_inputs`) in the embedded
// interpreter; returns the summary JSON text (with outputs_match) and the compile report.
struct ModelRun {
  std::string summary_json;
  std::string report_json;
  std::string torch_version;   // torch.__version__ of the run
  int graphs = 0, cached = 0;  // compiled subgraphs; of them, found in the program cache
  // The cache's model entry (tools/python/spyre_sim/model_cache.py): "hit" (the model file was
  // not run), "stored", "not stored: <why>", or "" (none: a functional run, or the cache off).
  std::string model_entry;
};
ModelRun run_model_file(const RunArgs& a, const std::string& trace, const std::string& out);

// The user's own model file raised while it was run: what() is its traceback (exit status 1).
struct ModelFileRaised : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace spyre::cli
