#include "spyre/runner/runner.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "spyre/error.h"
#include "spyre/runner/dram_bound.h"
#include "spyre/traces/filter.h"

namespace spyre::runner {

namespace {
bool is_compiler_key(const std::string& set) { return set.rfind("compiler.", 0) == 0; }
}  // namespace

arch::ArchConfig Settings::config() const {
  std::vector<std::string> chip;
  for (const auto& s : sets)
    if (!is_compiler_key(s)) chip.push_back(s);
  return arch::load_arch(arch, chip);
}

compiler::CompileOptions Settings::compile_options() const {
  compiler::CompileOptions o;
  bool efficiency_set = false;
  for (const auto& s : sets) {
    if (!is_compiler_key(s)) continue;
    auto eq = s.find('=');
    if (eq == std::string::npos) throw Error("--set " + s, "expected key=value");
    o.set(s.substr(9, eq - 9), s.substr(eq + 1));
    efficiency_set = efficiency_set || s.substr(9, eq - 9) == "cost.dram_efficiency";
  }
  // The cost model streams at the configured DRAM's own rate: the DRAM model's streaming
  // reads on this chip, simulated (dram_bound: a V-curve point, about 50 ms), as a share of
  // the peak. The rate does not follow the data rate (bank timings stay in ns; "spyre" at
  // 12800 MT/s streams the 146 GB/s of 6400), nor the core count linearly.
  if (!efficiency_set) {
    const arch::ArchConfig cfg = config();
    if (cfg.dram_impl == "lpddr5") {
      const double peak_gbps =
          static_cast<double>(cfg.dram_channels * cfg.dram_channel_width_bits) / 8.0 *
          cfg.dram_data_rate_mtps / 1000.0;
      const uint64_t bytes = static_cast<uint64_t>(kVcurveChunks * 32768 * cfg.cores);
      const double e = dram_bound(cfg, bytes, 0).gbps / peak_gbps;
      if (e > 0) o.cost.dram_efficiency = std::min(1.0, e);
    }
  }
  return o;
}

Executable Executable::from_ir(const nlohmann::json& ir, const Settings& s,
                               const std::string& file) {
  Executable e;
  e.cfg_ = s.config();
  std::string key;
  std::optional<compiler::CompileResult> cached;
  if (s.cache.enabled()) {
    std::vector<std::string> compiler_sets;
    for (const auto& set : s.sets)
      if (is_compiler_key(set)) compiler_sets.push_back(set);
    key = program_key(build_id(), e.cfg_, compiler_sets, ir.dump());
    cached = s.cache.load(key);
  }
  e.from_cache_ = cached.has_value();
  compiler::CompileResult r =
      cached ? std::move(*cached) : compiler::compile(ir, e.cfg_, s.compile_options(), file);
  if (e.from_cache_ && r.report.is_object()) r.report["file"] = file;  // this run's IR's name
  if (!e.from_cache_ && s.cache.enabled()) s.cache.store(key, r);
  e.program_ = std::move(r.program);
  e.inputs_ = std::move(r.inputs);
  e.outputs_ = std::move(r.outputs);
  e.report_ = std::move(r.report);
  return e;
}

Executable Executable::from_program(isa::Program p, const Settings& s) {
  Executable e;
  e.cfg_ = s.config();
  for (const auto& t : p.tensors) {
    compiler::TensorBinding b{t.name, t.dtype, t.size, t.stride, t.dram_addr};
    if (t.role == "input" || t.role == "parameter") e.inputs_.push_back(b);
    if (t.role == "output") e.outputs_.push_back(b);
  }
  e.program_ = std::move(p);
  return e;
}

uint64_t Executable::storage_bytes(const compiler::TensorBinding& b) {
  return isa::storage_span_bytes(b.dtype, b.size, b.stride, "tensor " + b.name);
}

std::string random_storage(const compiler::TensorBinding& b, uint64_t seed) {
  uint64_t bytes = Executable::storage_bytes(b);
  const uint64_t elems = bytes * 8 / static_cast<uint64_t>(isa::dtype_bits(b.dtype));
  std::string out(bytes, '\0');
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  // Integers 0 or 1: valid indices into every table a captured graph gathers from (BERT's
  // token-type embedding has 2 rows), so any IR runs without user inputs.
  std::uniform_int_distribution<int> small(0, 1);
  const bool is_float = isa::dtype_is_float(b.dtype);
  for (uint64_t e = 0; e < elems; ++e) {
    double v = is_float ? normal(rng) : (b.dtype == isa::DType::Bool ? small(rng) > 0 : small(rng));
    isa::store_element(reinterpret_cast<uint8_t*>(out.data()), b.dtype, static_cast<int64_t>(e), v);
  }
  return out;
}

RunOutput Executable::run(std::vector<std::string> inputs, const RunOptions& opts) const {
  // Timing-only runs never read tensor values (gathers use row 0, sim/README.md): inputs may
  // be left out (none is allocated) and no device memory image is made.
  if (inputs.empty() && !opts.timing_only)
    for (size_t i = 0; i < inputs_.size(); ++i) inputs.push_back(random_storage(inputs_[i], 1 + i));
  if (!inputs.empty() && inputs.size() != inputs_.size())
    throw Error("inputs", "expected " + std::to_string(inputs_.size()) + " tensors, got " +
                              std::to_string(inputs.size()));
  sim::DeviceMemory dram(opts.timing_only ? 0 : program_.dram_bytes, 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint64_t want = storage_bytes(inputs_[i]);
    if (inputs[i].size() != want)
      throw Error("input " + inputs_[i].name, "expected " + std::to_string(want) +
                                                  " bytes of storage, got " +
                                                  std::to_string(inputs[i].size()));
    if (inputs_[i].dram_addr + want > program_.dram_bytes)
      throw Error("input " + inputs_[i].name, "lies outside the program's device memory");
    if (!opts.timing_only) std::memcpy(dram.data() + inputs_[i].dram_addr, inputs[i].data(), want);
  }
  std::unique_ptr<traces::TraceOutput> writer;
  sim::SimOptions so;
  so.functional = !opts.timing_only;
  so.max_cycles = opts.max_cycles;
  if (!opts.trace_path.empty()) {
    std::string graph = opts.graph;
    if (report_.is_object() && report_.contains("graph") && report_["graph"].is_string())
      graph = report_["graph"].get<std::string>();
    traces::TraceMeta meta = trace_meta(cfg_, graph, static_cast<int>(program_.num_cores));
    meta.detail = opts.trace_detail;
    writer = std::make_unique<traces::TraceOutput>(opts.trace_path, meta, opts.trace_filter);
    so.trace = writer->sink();
    so.trace_detail = opts.trace_detail;
  }
  if (opts.host)
    so.host_call = [this, &opts](uint16_t kernel, uint8_t* data, uint64_t bytes) {
      const nlohmann::json* call = nullptr;
      if (report_.is_object() && report_.contains("kernels") && kernel < report_["kernels"].size())
        call = &report_["kernels"][kernel];
      if (!call || !call->contains("host_call"))
        throw Error("host.call of kernel " + std::to_string(kernel),
                    "the compile report does not describe it (a program run without its report)");
      opts.host((*call)["host_call"], data, bytes);
    };
  RunOutput out;
  out.sim = sim::simulate(program_, cfg_, dram, so);
  if (writer) {
    trace_kernels(*writer->sink(), out.sim, report_);
    writer->finish();
  }
  for (const auto& b : outputs_) {  // timing-only: zeros (no values were computed)
    uint64_t n = storage_bytes(b);
    out.outputs.push_back(
        opts.timing_only
            ? std::string(n, '\0')
            : std::string(reinterpret_cast<const char*>(dram.data() + b.dram_addr), n));
  }
  for (size_t i = 0; i < inputs_.size() && !opts.timing_only; ++i)
    if (inputs_[i].mutated)
      out.mutated.emplace_back(
          i, std::string(reinterpret_cast<const char*>(dram.data() + inputs_[i].dram_addr),
                         storage_bytes(inputs_[i])));
  out.summary = summary_json(out.sim, cfg_, opts.trace_path);
  return out;
}

}  // namespace spyre::runner
