// spyre-sim: the command-line front end. Subcommands live in cmd_*.cpp; this file only
// declares the interface and maps errors to exit statuses.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "spyre/error.h"
#include "spyre/runner/provenance.h"

namespace {
// Leaves without finalising the embedded interpreter: torch's threads make Python's
// finalisation crash-prone, and every file we write is complete (atomic) by now.
[[noreturn]] void finish(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
}
int dispatch(int argc, char** argv);
}  // namespace

int main(int argc, char** argv) { finish(dispatch(argc, argv)); }

namespace {
int dispatch(int argc, char** argv) {
  using namespace spyre::cli;
  CLI::App app{
      "spyre-sim: a cycle-level Spyre-class accelerator simulator with an Inductor compiler"};
  app.require_subcommand(1);
  app.set_version_flag("--version", spyre::runner::version_line());
  bool debug = false;
  app.add_flag("--debug", debug, "show internal tracebacks on errors");
  const std::vector<std::string> command(argv, argv + argc);

  RunArgs run;
  run.program = argv[0];
  run.command = command;
  auto* r = app.add_subcommand(
      "run", "compile and simulate a model file (.py), an IR (.json) or a program (.s/.bin)");
  r->add_option("target", run.target, "model .py, IR .json, or program .s/.bin")->required();
  r->add_option("--arch", run.arch, "architecture preset name or YAML file");
  r->add_option("--set", run.sets,
                "override a parameter: key=value (repeatable; compiler.* keys go to the compiler)");
  auto* trace_opt =
      r->add_option("--trace", run.trace,
                    "trace file: .pftrace = Perfetto protobuf, otherwise Chrome trace-event JSON; "
                    "default <out>/trace.pftrace");
  r->add_option("--trace-detail", run.trace_detail,
                "summary (default: kernels, barriers and per-window unit busy, DRAM and ring "
                "counters) or full (also every instruction, DRAM transaction, ring transfer and "
                "flow: what `trace report/validate` read)")
      ->check(CLI::IsMember({"summary", "full"}));
  r->add_flag("--no-trace", run.no_trace, "write no trace")->excludes(trace_opt);
  r->add_option("--trace-filter", run.trace_filter,
                "keep only some events, e.g. 'unit=pt,dma;core=0-3;window=1000:50000' "
                "(units: seq dma dma_in dma_out pt sfp ring dram barrier kernels lx; window in "
                "cycles [A,B))");
  r->add_option("--out", run.out, "output folder; default spyre-sim-out/<target name>");
  r->add_flag("--json", run.json, "print one JSON object instead of the summary");
  r->add_flag("--timing-only", run.timing_only, "skip the arithmetic (same timing)");
  r->add_flag("--no-cache", run.no_cache,
              "compile even if the program cache ($SPYRE_SIM_CACHE, default ~/.cache/spyre-sim) "
              "holds this graph's program; nothing is stored");

  std::string in, out, report, arch = "spyre";
  std::vector<std::string> sets;
  auto* as = app.add_subcommand("asm", "assemble a text program into the binary format");
  as->add_option("input", in, "assembly file")->required();
  as->add_option("-o,--output", out, "binary program to write")->required();
  auto* ds = app.add_subcommand("disasm", "disassemble a binary program");
  ds->add_option("input", in, "binary program")->required();
  ds->add_option("-o,--output", out, "assembly file to write (default: stdout)");
  auto* cp = app.add_subcommand("compile", "compile an IR JSON into a program");
  cp->add_option("input", in, "IR JSON")->required();
  cp->add_option("-o,--output", out, "program to write (.s text, else binary)")->required();
  cp->add_option("--report", report, "compile report JSON to write");
  cp->add_option("--arch", arch, "architecture preset name or YAML file");
  cp->add_option("--set", sets, "override a parameter: key=value");

  auto* ar = app.add_subcommand("arch", "show architecture configurations");
  ar->require_subcommand(1);
  std::string arch_name = "spyre";
  auto* show = ar->add_subcommand("show", "print every parameter with value, unit and description");
  show->add_option("name", arch_name, "preset name or YAML file (default spyre)");
  show->add_option("--set", sets, "override a parameter: key=value");
  auto* list = ar->add_subcommand("list", "list the presets");
  auto* isa = app.add_subcommand("isa", "the instruction set");
  isa->require_subcommand(1);
  auto* doc = isa->add_subcommand("doc", "print the instruction table as Markdown");
  // Subcommands written in Python: every argument after the name goes to the module's main().
  const std::vector<std::pair<CLI::App*, std::string>> python = {
      {app.add_subcommand("trace", "trace tools: report, view, validate (see `trace -h`)"),
       "spyre_sim.trace.cli"},
      {app.add_subcommand("regress",
                          "compiler regression: simulate the suite's cases and compare their "
                          "cycles with the stored baselines (see `regress -h`)"),
       "spyre_sim.regression"},
      {app.add_subcommand("sweep",
                          "architecture sweep: a grid of configurations over models, in parallel "
                          "(see `sweep -h`; `sweep plot` redraws)"),
       "spyre_sim.sweeps.cli"},
      {app.add_subcommand("llm",
                          "LLM inference: a prefill and greedy decode steps with a static KV "
                          "cache, per-step latency and bandwidth (see `llm -h`)"),
       "spyre_sim.llm"},
      {app.add_subcommand("script",
                          "run FILE.py [ARGS] in the embedded interpreter (`import spyre_sim`)"),
       "spyre_sim.script"}};
  for (const auto& [sub, module] : python) sub->prefix_command()->allow_extras()->set_help_flag();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  run.debug = debug;
  try {
    if (r->parsed()) return run_command(run);
    if (as->parsed()) return asm_command(in, out);
    if (ds->parsed()) return disasm_command(in, out);
    if (cp->parsed()) return compile_command(in, out, report, arch, sets);
    if (show->parsed()) return arch_show_command(arch_name, sets);
    if (list->parsed()) return arch_list_command();
    if (doc->parsed()) return isa_doc_command();
    for (const auto& [sub, module] : python)
      if (sub->parsed()) return python_command(module, sub->remaining(), command, debug);
  } catch (const ModelFileRaised& e) {
    std::fflush(stdout);
    std::cerr << "spyre-sim: the model file raised an exception:\n" << e.what();
    return 1;
  } catch (const spyre::Error& e) {
    std::fflush(stdout);
    std::cerr << "spyre-sim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "spyre-sim: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
}  // namespace
