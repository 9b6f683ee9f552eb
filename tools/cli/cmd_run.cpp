// `spyre-sim run TARGET`: a model file goes through the embedded Python (torch.compile with the
// spyre_sim backend); an IR or a program file is compiled and simulated here with seeded random
// inputs. Every run writes an output folder with the summary, stats, report, effective
// configuration and trace.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/isa/format.h"
#include "spyre/runner/provenance.h"
#include "spyre/runner/runner.h"
#include "spyre/traces/filter.h"

namespace spyre::cli {

namespace {

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

runner::Executable load_target(const RunArgs& a, const runner::Settings& s) {
  if (ends_with(a.target, ".json")) {
    return runner::Executable::from_ir(
        compiler::ir::parse_ir_json(read_file_text(a.target), a.target), s, a.target);
  }
  return runner::Executable::from_program(isa::load_program(a.target), s);
}

// 1 when a functional run's outputs did not match the reference, else 0.
int outputs_match_status(const nlohmann::json& summary) {
  const auto& m = summary["outputs_match"];
  return (m.is_boolean() && !m.get<bool>()) ? 1 : 0;
}

}  // namespace

int run_command(const RunArgs& a) {
  if (!std::filesystem::exists(a.target)) throw Error(a.target, "no such file");
  traces::parse_trace_filter(a.trace_filter);  // bad syntax: exit 2 before any work
  std::string stem = std::filesystem::path(a.target).stem().string();
  std::string out =
      a.out.empty() ? (std::filesystem::path("spyre-sim-out") / stem).string() : a.out;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw Error(out, "cannot create output folder: " + ec.message());
  std::string trace = a.no_trace        ? std::string()
                      : a.trace.empty() ? (std::filesystem::path(out) / "trace.pftrace").string()
                                        : a.trace;
  const traces::TraceDetail detail = traces::parse_trace_detail(a.trace_detail);

  nlohmann::json summary, report;
  runner::Settings settings{a.arch, a.sets, {}};
  if (!a.no_cache) settings.cache = runner::ProgramCache::from_env();
  std::string torch_version, torch_source;
  int graphs = 0, cached = 0;  // compiled from IR; of them, found in the program cache
  std::string model_entry;     // a model file's entry in the cache: hit, stored or none
  if (ends_with(a.target, ".py")) {
    ModelRun m = run_model_file(a, trace, out);
    graphs = m.graphs;
    cached = m.cached;
    model_entry = m.model_entry;
    summary = nlohmann::json::parse(m.summary_json);
    if (!m.report_json.empty()) report = nlohmann::json::parse(m.report_json);
    torch_version = m.torch_version;
    // On a model cache hit torch is not imported: the version is the one that captured.
    torch_source = m.model_entry == "hit" ? "model cache entry" : "installed";
  } else {
    auto exe = load_target(a, settings);
    graphs = ends_with(a.target, ".json") ? 1 : 0;
    cached = exe.from_cache() ? 1 : 0;
    runner::RunOptions o;
    o.trace_path = trace;
    o.host = embedded_host();
    o.trace_filter = a.trace_filter;
    o.trace_detail = detail;
    o.graph = stem;
    o.timing_only = a.timing_only;
    summary = exe.run({}, o).summary;
    report = exe.report().is_null() ? nlohmann::json(nullptr) : exe.report();
    if (report.is_object() && report.value("torch_version", std::string()) != "") {
      torch_version = report["torch_version"].get<std::string>();
      torch_source = "ir";
    }
  }
  summary["out"] = out;
  nlohmann::json prov = runner::provenance(a.command, torch_version, torch_source, a.arch, a.sets);
  prov["program_cache"] = nullptr;
  if (settings.cache.enabled())
    prov["program_cache"] = {{"dir", settings.cache.dir}, {"graphs", graphs}, {"hits", cached}};
  if (!model_entry.empty()) prov["model_cache"] = model_entry;
  runner::write_output_folder(out, summary, report, settings.config(), prov);
  if (a.json) {
    std::cout << summary.dump() << std::endl;
  } else {
    std::cout << "spyre-sim run " << a.target << "\n" << runner::format_summary(summary);
    std::cout << "  output folder     " << out << "\n";
    if (graphs > 0 && settings.cache.enabled())
      std::cout << "  program cache     " << cached << " of " << graphs << " graph(s) found there, "
                << graphs - cached << " compiled and stored (" << settings.cache.dir
                << "; --no-cache: compile all)\n";
    if (model_entry == "hit")
      std::cout << "  model cache       hit: the model file and the files it read are unchanged, "
                   "so it was not run; its graphs were replayed in their recorded order\n";
    else if (model_entry == "stored")
      std::cout << "  model cache       stored: a timing-only rerun skips the model file and "
                   "Dynamo while it and the files it read stay unchanged\n";
    else if (!model_entry.empty())
      std::cout << "  model cache       " << model_entry << "\n";
    if (!summary["trace"].is_string()) {
      std::cout << "  trace             none (--no-trace)\n";
      return outputs_match_status(summary);
    }
    // One-line follow-ups: the trace tools read what this run just wrote.
    const std::string tr = summary["trace"].get<std::string>();
    std::cout << "  trace             " << tr << "  (" << traces::trace_detail_name(detail)
              << " detail; open in https://ui.perfetto.dev"
              << (traces::is_perfetto_path(tr) ? "" : " or chrome://tracing") << ")\n";
    std::string rep = report.is_null() ? "" : (std::filesystem::path(out) / "report.json").string();
    std::cout << "  view              " << a.program << " trace view " << tr << " -o "
              << (std::filesystem::path(out) / "view.html").string()
              << (rep.empty() ? "" : " --report " + rep) << "\n";
    std::cout << "  report            " << a.program << " trace report " << tr
              << (rep.empty() ? "" : " --report " + rep) << "\n";
    // validate checks the trace against the compile report and re-simulates the fusion
    // decisions from the IR the report names (a model file's run saves it in the output
    // folder); several subgraphs have no single IR, so their fusion check is skipped.
    const bool has_ir = report.is_object() && report.contains("file") &&
                        report["file"].is_string() &&
                        ends_with(report["file"].get<std::string>(), ".json");
    if (detail == traces::TraceDetail::Summary)
      std::cout << "  full detail       add --trace-detail full for every instruction, DRAM "
                   "transaction and flow (trace validate, critical paths)\n";
    else if (!rep.empty())
      std::cout << "  validate          " << a.program << " trace validate " << tr << " --report "
                << rep << (has_ir ? "" : " --skip-fusion") << "\n";
  }
  return outputs_match_status(summary);
}

}  // namespace spyre::cli
