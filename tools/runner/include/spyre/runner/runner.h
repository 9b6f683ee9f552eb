#pragma once
// The one place that joins the parts: compile an IR (compiler), load device memory, simulate
// (sim), record the trace (traces) and build the run summary. The CLI and the Python module
// are both thin layers over this.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/isa/isa.h"
#include "spyre/runner/program_cache.h"
#include "spyre/sim/simulate.h"
#include "spyre/traces/sink.h"

namespace spyre::runner {

struct RunOptions {
  std::string trace_path;    // empty: no trace; ".pftrace" -> Perfetto protobuf, else Chrome JSON
  std::string trace_filter;  // --trace-filter spec (traces/filter.h); empty: everything
  // --trace-detail: summary (kernels, barriers, windowed unit/DRAM/ring counters; the default a
  // person can open) or full (also every instruction, DRAM transaction, ring transfer and flow)
  traces::TraceDetail trace_detail = traces::TraceDetail::Summary;
  std::string graph;  // trace metadata name when the compile report has no graph name
  bool timing_only = false;
  uint64_t max_cycles = 0;
  // The host of a functional run's host fallbacks (compiler/host_call.h): runs the compile
  // report's `host_call` description over the device memory (spyre_sim/host_fallback.py does,
  // for the Python module and the CLI). Unset: a program with host calls runs timing-only only.
  std::function<void(const nlohmann::json& call, uint8_t* dram, uint64_t dram_bytes)> host;
};
using HostFn = decltype(RunOptions::host);

// `--set` values split by owner: `compiler.*` keys go to the compiler, the rest to the chip.
struct Settings {
  std::string arch = "spyre";
  std::vector<std::string> sets;
  // Where compiled programs are kept between runs (program_cache.h); default: none. The CLI and
  // the Python module take ProgramCache::from_env() unless told --no-cache / cache=False.
  ProgramCache cache;
  arch::ArchConfig config() const;
  compiler::CompileOptions compile_options() const;
};

struct RunOutput {
  std::vector<std::string> outputs;  // storage bytes of each output binding
  // Functional runs: storage bytes of each input binding the graph writes in place (mutated),
  // by input index; the caller writes them back to its tensors.
  std::vector<std::pair<size_t, std::string>> mutated;
  nlohmann::json summary;  // see summary_json()
  sim::SimResult sim;
};

// A program plus where its tensors live: compiled from IR, or loaded from a program file
// (then bindings come from the program's tensor table).
class Executable {
 public:
  static Executable from_ir(const nlohmann::json& ir, const Settings& s,
                            const std::string& file = "<ir>");
  static Executable from_program(isa::Program p, const Settings& s);

  const isa::Program& program() const { return program_; }
  const arch::ArchConfig& config() const { return cfg_; }
  const std::vector<compiler::TensorBinding>& inputs() const { return inputs_; }
  const std::vector<compiler::TensorBinding>& outputs() const { return outputs_; }
  const nlohmann::json& report() const { return report_; }
  // from_ir found the compile result in the program cache (no compile ran)
  bool from_cache() const { return from_cache_; }

  // Storage bytes each input binding expects (span of its size/stride).
  static uint64_t storage_bytes(const compiler::TensorBinding& b);
  // `inputs` must hold one buffer per input binding of exactly storage_bytes(); an empty
  // vector fills inputs with seeded random values (for IR or program targets). A timing-only
  // run reads no values: it allocates no device memory image, its inputs may be empty, and
  // its outputs are zeros.
  RunOutput run(std::vector<std::string> inputs, const RunOptions& opts) const;

 private:
  isa::Program program_;
  arch::ArchConfig cfg_;
  std::vector<compiler::TensorBinding> inputs_, outputs_;
  nlohmann::json report_;
  bool from_cache_ = false;
};

// The trace metadata of a run: clock, every arch parameter (typed JSON), graph name, cores.
traces::TraceMeta trace_meta(const arch::ArchConfig& cfg, const std::string& graph, int cores);
// Kernel spans on track chip/kernels (from the run's first to last instruction of each kernel,
// over all cores) annotated with the compile report's fusion group and predicted cycles, and
// the counters chip/"lx planned bytes" (the compile report's planned LX peak of the kernels
// running) and core N/"lx planned bytes" (the report's lx_plan bytes core N holds in each
// kernel): the simulator itself does not know buffers, only accesses.
void trace_kernels(traces::TraceSink& sink, const sim::SimResult& r, const nlohmann::json& report);

// Seeded random storage for a binding (N(0, 1) floats, ints and bools 0 or 1).
std::string random_storage(const compiler::TensorBinding& b, uint64_t seed);

// The summary every front end prints: cycles, device_time_us, clock_ghz, arch, kernels
// [{name, cycles, start_cycle, end_cycle}], utilisation {pt, sfp, dma_in, dma_out, ring},
// dram {read_bytes, write_bytes, achieved_gbps, peak_gbps}, stats, trace, outputs_match.
nlohmann::json summary_json(const sim::SimResult& r, const arch::ArchConfig& cfg,
                            const std::string& trace_path);
// Sums several subgraph runs into one summary (kernels concatenated, cycles added).
nlohmann::json merge_summaries(const std::vector<nlohmann::json>& parts);
// Human-readable summary for the terminal.
std::string format_summary(const nlohmann::json& summary);

// Writes summary.json, stats.json, report.json (if any), the effective arch.yaml and
// provenance.json (if given: provenance.h) into `dir` (created if missing), atomically each.
void write_output_folder(const std::string& dir, const nlohmann::json& summary,
                         const nlohmann::json& report, const arch::ArchConfig& cfg,
                         const nlohmann::json& provenance = nullptr);

}  // namespace spyre::runner
