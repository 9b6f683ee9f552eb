// The compiler's driver: load and validate the IR, plan DRAM, lower each node to one kernel
// (all cores meet at a barrier between kernels; data passes through DRAM), predict, report.
#include "spyre/compiler/compile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spyre/compiler/column_reduction.h"
#include "spyre/compiler/context.h"
#include "spyre/compiler/cost.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/dram_plan.h"
#include "spyre/compiler/empty_nodes.h"
#include "spyre/compiler/fuse.h"
#include "spyre/compiler/ibm_schedule.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"
#include "spyre/compiler/loop_compress.h"
#include "spyre/compiler/lx_plan.h"
#include "spyre/compiler/lx_residency.h"
#include "spyre/compiler/matmul_operand_copy.h"
#include "spyre/compiler/parallel.h"
#include "spyre/compiler/select.h"
#include "spyre/compiler/split_reduction.h"
#include "spyre/compiler/transpose.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

std::string kernel_name(const ir::Node& n);

std::string kernel_name(const ir::Graph& g, const FusionGroup& grp) {
  // A fallback's group also holds its MultiOutput nodes (views of its tuple): one node's kernel.
  if (grp.nodes.size() == 1 || g.nodes[grp.nodes[0]].kind == "fallback")
    return kernel_name(g.nodes[grp.nodes[0]]);
  std::string s;
  for (auto i : grp.nodes) s += g.nodes[i].name + "_";
  if (grp.matmul >= 0) {
    const std::string& k = g.nodes[static_cast<size_t>(grp.matmul)].kernel;
    return s + k.substr(k.rfind('.') + 1);
  }
  return s + "fused";
}

std::string kernel_name(const ir::Node& n) {
  std::string tail;
  if (n.kind == "fallback" && n.op_overload.rfind("aten.", 0) == 0) {  // aten.topk.default
    tail = n.op_overload.substr(5);
    tail = tail.substr(0, tail.find('.'));
  } else if (n.kind == "extern" || n.kind == "fallback") {
    tail = n.kernel.substr(n.kernel.rfind('.') + 1);
  } else if (n.aten.size() == 1) {
    tail = n.aten[0];
    if (tail.rfind("aten.", 0) == 0) tail = tail.substr(5);
    tail = tail.substr(0, tail.find('.'));
  } else {
    tail = n.kind;
  }
  return n.name + "_" + tail;
}

std::string role_of(const ir::Graph& g, const ir::Buffer& b) {
  for (const auto& o : g.outputs)
    if (&g.storage_of(o.buffer) == &b) return "output";
  if (b.kind == "input") return "input";
  if (b.kind == "parameter" || b.kind == "constant") return "parameter";
  for (const auto& in : g.inputs)
    if (&g.storage_of(in) == &b) return "input";
  return "scratch";
}

// `count` comma-separated integers >= 1, or an error naming compiler.<key> and `what`.
std::vector<int64_t> positive_ints(const std::string& key, const std::string& value, size_t count,
                                   const std::string& what) {
  std::vector<std::string> tokens(1);
  for (char c : value) {
    if (c == ',')
      tokens.emplace_back();
    else
      tokens.back() += c;
  }
  std::vector<int64_t> out;
  bool ok = tokens.size() == count;
  for (size_t i = 0; ok && i < count; ++i) {
    try {
      size_t used = 0;
      out.push_back(std::stoll(tokens[i], &used));
      ok = used == tokens[i].size() && out.back() >= 1;
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok)
    throw Error("compiler." + key,
                "expected " +
                    std::string(count == 1 ? "a positive integer "
                                           : std::to_string(count) + " positive integers ") +
                    what + ", got '" + value + "'");
  return out;
}

// `value` as a number when std::stod reads all of it.
std::optional<double> number(const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A switch: true/1/on or false/0/off, or an error naming compiler.<key> and `what`.
bool on_off(const std::string& key, const std::string& value, const char* what) {
  if (value == "true" || value == "1" || value == "on") return true;
  if (value == "false" || value == "0" || value == "off") return false;
  throw Error("compiler." + key, std::string("expected ") + what + ", got '" + value + "'");
}

}  // namespace

void CompileOptions::set(const std::string& key, const std::string& value) {
  if (key == "fusion_limit") {
    try {
      fusion_limit = std::stoll(value);
    } catch (const std::exception&) {
      throw Error("compiler.fusion_limit", "expected an integer, got '" + value + "'");
    }
    return;
  }
  if (key == "fusion") {
    fusion = on_off(key, value, "true or false");
    return;
  }
  if (key == "schedule") {
    if (value != "own" && value != "ibm")
      throw Error("compiler.schedule", "expected own or ibm, got '" + value + "'");
    schedule = value;
    return;
  }
  if (key == "ibm.kernel_start_ns") {
    // Digits only: no spaces or hex, which std::stod would take.
    const bool plain =
        !value.empty() && value.find_first_not_of("0123456789.eE+-") == std::string::npos;
    const double v = plain ? number(value).value_or(-1) : -1;
    if (!(v >= 0 && v <= 1e9))
      throw Error("compiler.ibm.kernel_start_ns",
                  "expected nanoseconds in [0, 1e9], got '" + value + "'");
    ibm_kernel_start_ns = v;
    return;
  }
  if (key == "cores") {
    cores = positive_ints(key, value, 1, "N (the cores the work is divided over, >= 1)")[0];
    return;
  }
  if (key == "threads") {
    threads = positive_ints(key, value, 1, "N (threads for the compile's lowerings, >= 1)")[0];
    return;
  }
  if (key == "hw_loops") {
    hw_loops = on_off(key, value, "on or off");
    return;
  }
  if (key.rfind("cost.", 0) == 0) {  // the cost model's constants (cost.h)
    static const std::map<std::string, double CostParams::*> fields = {
        {"cost.dram_efficiency", &CostParams::dram_efficiency},
        {"cost.channel_efficiency", &CostParams::channel_efficiency},
        {"cost.turnaround_ns_per_byte", &CostParams::turnaround_ns_per_byte},
        {"cost.strided_channel_rate", &CostParams::strided_channel_rate},
        {"cost.strided_visit_words", &CostParams::strided_visit_words}};
    auto f = fields.find(key);
    if (f == fields.end())
      throw Error(
          "compiler." + key,
          "unknown cost parameter (known: cost.dram_efficiency, "
          "cost.channel_efficiency, cost.turnaround_ns_per_byte, cost.strided_channel_rate, "
          "cost.strided_visit_words)");
    const auto parsed = number(value);
    if (!parsed) throw Error("compiler." + key, "expected a number, got '" + value + "'");
    const double v = *parsed;
    const bool fraction = key == "cost.dram_efficiency" || key == "cost.channel_efficiency" ||
                          key == "cost.strided_channel_rate";
    if (fraction && !(v > 0 && v <= 1))
      throw Error("compiler." + key, "expected a fraction in (0, 1], got '" + value + "'");
    if (!(v >= 0)) throw Error("compiler." + key, "must not be negative, got '" + value + "'");
    cost.*(f->second) = v;
    return;
  }
  if (key == "lx_planning") {
    lx_planning = on_off(key, value, "on or off");
    return;
  }
  if (key == "joint_division") {
    joint_division = on_off(key, value, "on or off");
    return;
  }
  if (key == "host_fallback") {
    host_fallback = on_off(key, value, "on or off");
    return;
  }
  if (key == "split_reduction") {
    split_reduction = on_off(key, value, "on or off");
    return;
  }
  if (key == "layout_copy") {
    parse_layout_copy_mode(value);  // throws naming the option
    layout_copy = value;
    return;
  }
  if (key == "matmul_split") {
    const auto parts = positive_ints(key, value, 4, "b,m,n,k (parts of batch, M, N, K)");
    std::copy(parts.begin(), parts.end(), matmul_split.begin());
    return;
  }
  if (key == "matmul_tiles") {
    const auto t = positive_ints(key, value, 3, "tm,tn,tk (tile rows, columns and K step)");
    std::copy(t.begin(), t.end(), matmul_tiles.begin());
    return;
  }
  if (key == "matmul_lead") {
    matmul_lead = positive_ints(key, value, 1, "L (m tiles of a B panel walked K-outer)")[0];
    return;
  }
  if (key == "debug.lx_plan_error") {
    static const std::map<std::string, LxPlanError> kinds = {{"none", LxPlanError::None},
                                                             {"shift", LxPlanError::Shift},
                                                             {"shrink", LxPlanError::Shrink},
                                                             {"overlap", LxPlanError::Overlap}};
    auto it = kinds.find(value);
    if (it == kinds.end())
      throw Error("compiler.debug.lx_plan_error",
                  "expected none, shift, shrink or overlap, got '" + value + "'");
    debug.lx_plan_error = it->second;
    return;
  }
  if (key == "debug.conv_halo") {
    static const std::map<std::string, ConvHalo> kinds = {{"auto", ConvHalo::Auto},
                                                          {"halo", ConvHalo::Halo},
                                                          {"taps", ConvHalo::Taps},
                                                          {"wide", ConvHalo::Wide}};
    auto it = kinds.find(value);
    if (it == kinds.end())
      throw Error("compiler.debug.conv_halo",
                  "expected auto, halo, wide or taps, got '" + value + "'");
    debug.conv_halo = it->second;
    return;
  }
  if (key == "debug.force_fusion") {
    debug.force_all_fusions = value == "all";
    debug.force_fusion.clear();
    if (value == "all" || value == "none") return;
    std::string tok;
    for (size_t i = 0; i <= value.size(); ++i) {
      if (i < value.size() && value[i] != ',') {
        tok += value[i];
        continue;
      }
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(tok, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != tok.size() || v < 0)
        throw Error("compiler.debug.force_fusion",
                    "expected all, none or decision indices i,j,... (>= 0), got '" + value + "'");
      debug.force_fusion.push_back(v);
      tok.clear();
    }
    return;
  }
  std::string known;
  for (const auto& k : keys()) known += (known.empty() ? "" : ", ") + k;
  throw Error("compiler." + key, "unknown compiler option (known: " + known + ")");
}

const std::vector<std::string>& CompileOptions::keys() {
  static const std::vector<std::string> k = {"cores",
                                             "schedule",
                                             "ibm.kernel_start_ns",
                                             "fusion",
                                             "fusion_limit",
                                             "matmul_split",
                                             "matmul_tiles",
                                             "matmul_lead",
                                             "hw_loops",
                                             "split_reduction",
                                             "lx_planning",
                                             "joint_division",
                                             "host_fallback",
                                             "threads",
                                             "layout_copy",
                                             "cost.dram_efficiency",
                                             "cost.channel_efficiency",
                                             "cost.turnaround_ns_per_byte",
                                             "cost.strided_channel_rate",
                                             "cost.strided_visit_words",
                                             "debug.lx_plan_error",
                                             "debug.force_fusion",
                                             "debug.conv_halo"};
  return k;
}

LayoutCopyMode parse_layout_copy_mode(const std::string& s) {
  if (s == "auto") return LayoutCopyMode::Auto;
  if (s == "transpose") return LayoutCopyMode::Transpose;
  if (s == "loops") return LayoutCopyMode::Loops;
  throw Error("compiler.layout_copy", "expected auto, transpose or loops, got '" + s + "'");
}

bool CompileDebug::forces(size_t decision) const {
  if (force_all_fusions) return true;
  return std::find(force_fusion.begin(), force_fusion.end(), static_cast<int64_t>(decision)) !=
         force_fusion.end();
}

nlohmann::json CompileOptions::to_json() const {
  static const char* errs[] = {"none", "shift", "shrink", "overlap"};
  static const char* halos[] = {"auto", "halo", "taps", "wide"};
  nlohmann::json force =
      debug.force_all_fusions ? nlohmann::json("all") : nlohmann::json(debug.force_fusion);
  return {{"cores", cores},
          {"schedule", schedule},
          {"ibm", {{"kernel_start_ns", ibm_kernel_start_ns}}},
          {"fusion", fusion},
          {"fusion_limit", fusion_limit},
          {"matmul_split", matmul_split},
          {"matmul_tiles", matmul_tiles},
          {"matmul_lead", matmul_lead},
          {"hw_loops", hw_loops},
          {"split_reduction", split_reduction},
          {"lx_planning", lx_planning},
          {"joint_division", joint_division},
          {"host_fallback", host_fallback},
          {"layout_copy", layout_copy},
          {"cost",
           {{"dram_efficiency", cost.dram_efficiency},
            {"channel_efficiency", cost.channel_efficiency},
            {"turnaround_ns_per_byte", cost.turnaround_ns_per_byte},
            {"strided_channel_rate", cost.strided_channel_rate},
            {"strided_visit_words", cost.strided_visit_words}}},
          {"debug",
           {{"lx_plan_error", errs[static_cast<int>(debug.lx_plan_error)]},
            {"force_fusion", force},
            {"conv_halo", halos[static_cast<int>(debug.conv_halo)]}}}};
}

CompileResult compile(const nlohmann::json& j, const arch::ArchConfig& chip,
                      const CompileOptions& opts, const std::string& file) {
  chip.validate();
  // `compiler.cores=N`: the work is divided over cores 0..N-1; the chip keeps all of its cores
  // (the others stay idle: the program has N streams, sim/README.md), its rings and its DRAM.
  if (opts.cores > chip.cores)
    throw Error("compiler.cores", "expected 1 to " + std::to_string(chip.cores) +
                                      " (the cores of '" + chip.name + "'), got " +
                                      std::to_string(opts.cores));
  arch::ArchConfig divided = chip;
  if (opts.cores > 0) divided.cores = static_cast<int>(opts.cores);
  const arch::ArchConfig& cfg = divided;
  // IBM's schedule (ibm_schedule.h): Inductor's kernels unfused, every op a step of its own.
  const bool ibm = opts.schedule == "ibm";
  CompileOptions effective = opts;
  if (ibm) effective.fusion = false;
  const CompileContext ctx(effective);
  ir::Graph loaded = ir::load_ir(j, file, ir::LoadOptions{opts.host_fallback});
  drop_empty_nodes(loaded, opts.host_fallback);
  std::vector<ColumnReduction> operand_copies = copy_transposed_matmul_a(loaded);
  for (auto& c : copy_select_operands(loaded)) operand_copies.push_back(c);
  const std::vector<ColumnReduction> columns = rewrite_column_reductions(loaded, cfg);
  const std::vector<SplitReduction> splits =
      split_reductions(loaded, cfg, SplitReductionOptions{opts.split_reduction});
  const std::vector<OpSplit> op_steps =
      ibm ? split_ops_through_dram(loaded) : std::vector<OpSplit>{};
  const std::vector<std::string> retyped =
      ibm ? store_at_device_dtype(loaded) : std::vector<std::string>{};
  const ir::Graph& g = loaded;
  const DramPlan dram = plan_dram(g, cfg);

  CompileResult res;
  isa::Program& prog = res.program;
  prog.num_cores = static_cast<uint32_t>(cfg.cores);
  prog.dram_bytes = dram.total_bytes;
  std::vector<CoreStream> cores(static_cast<size_t>(cfg.cores));

  const FusionPlan fusion = plan_fusion(ctx, g, cfg, dram);
  const size_t ngroups = fusion.groups.size();
  // The whole-graph LX plan (lx_residency.h): a first lowering of every kernel measures its
  // working set and how it divides its rows (`lx`: with what the plan gives it).
  std::vector<GroupLx> first(ngroups);
  const bool lx_planning = opts.lx_planning && ngroups > 1;
  const NodeIo io(g);
  auto trial = [&](size_t gi, const KernelLx* lx) {
    const FusionGroup& grp = fusion.groups[gi];
    const auto id = static_cast<uint16_t>(gi);
    GroupLx out = first[gi];
    std::vector<CoreStream> scratch(static_cast<size_t>(cfg.cores));
    const GroupKernel gk = lower_group(ctx, g, grp, cfg, dram, id, scratch, gi + 1 == ngroups, lx);
    out.division = gk.division;
    out.grid = gk.grid;
    out.cycles = gk.pred.cycles;
    out.lx_peak = out.lx_min = gk.lx_bytes;
    // A loop kernel with a large working set can make room for resident slots with smaller
    // tiles: what it needs at a quarter of the usable LX (same row division), if it lowers.
    const int64_t compact = cfg.lx_usable_bytes() / 4;
    if (gk.division && !gk.grid && gk.lx_bytes > compact && !gk.report.contains("spills") &&
        (!lx || lx->resident.empty())) {
      KernelLx capped = lx ? *lx : KernelLx{};
      capped.lx_top = compact;
      std::vector<CoreStream> scratch2(static_cast<size_t>(cfg.cores));
      try {
        const GroupKernel small =
            lower_group(ctx, g, grp, cfg, dram, id, scratch2, gi + 1 == ngroups, &capped);
        if (small.division && small.division->same_rows(*gk.division) &&
            !small.report.contains("spills"))
          out.lx_min = small.lx_bytes;
      } catch (const Error&) {
        // it needs its whole working set: lx_min stays lx_peak
      }
    }
    out.spills = gk.report.contains("spills");
    out.cross_core = gk.cross_core;
    out.host = gk.report.value("unit", "") == "host";
    return out;
  };
  for (size_t gi = 0; gi < ngroups; ++gi) {
    const FusionGroup& grp = fusion.groups[gi];
    first[gi].name = kernel_name(g, grp);
    first[gi].reads = group_reads(g, grp);
    first[gi].writes = group_writes(io, g, grp);
  }
  // Each kernel's first lowering is its own (parallel.h); the first that fails throws.
  if (lx_planning)
    for_each_index(ngroups, opts.threads, [&](size_t gi) { first[gi] = trial(gi, nullptr); });
  // Work division chosen with the plan: a loop kernel may take its producer's rows
  // (lx_residency.h).
  nlohmann::json joint = nlohmann::json::array();
  const LxResidencyPlan lxp = plan_lx_jointly(
      g, first, cfg, lx_planning, opts.joint_division,
      [&](size_t gi, const KernelLx& lx) -> std::optional<GroupLx> {
        try {
          return trial(gi, &lx);
        } catch (const Error&) {
          return std::nullopt;
        }
      },
      joint);

  nlohmann::json kernels = nlohmann::json::array();
  int64_t total_cycles = 0, total_dram = 0;
  for (size_t gi = 0; gi < ngroups; ++gi) {
    const FusionGroup& grp = fusion.groups[gi];
    const auto id = static_cast<uint16_t>(gi);
    prog.kernels.push_back(kernel_name(g, grp));
    GroupKernel gk =
        lower_group(ctx, g, grp, cfg, dram, id, cores, gi + 1 == ngroups, &lxp.kernels[gi]);
    total_cycles += gk.pred.cycles;
    total_dram += gk.pred.dram_bytes;
    const ir::Node& lead =
        g.nodes[grp.matmul >= 0 ? static_cast<size_t>(grp.matmul) : grp.nodes[0]];
    nlohmann::json e = gk.report;
    e["id"] = id;
    e["name"] = prog.kernels.back();
    e["node"] = grp.name(g);
    const bool fused = grp.nodes.size() > 1 && lead.kind != "fallback";
    e["fusion_group"] = fused ? nlohmann::json(grp.name(g)) : nlohmann::json(nullptr);
    e["nodes"] = nlohmann::json::array();
    nlohmann::json aten = nlohmann::json::array();
    for (auto i : grp.nodes) {
      e["nodes"].push_back(g.nodes[i].name);
      for (const auto& a : g.nodes[i].aten) aten.push_back(a);
    }
    e["kind"] = fused ? "fused:" + grp.kind : lead.kind;
    e["aten"] = aten;
    e["source"] = lead.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(lead.source);
    if (!lead.kernel.empty()) e["kernel"] = lead.kernel;
    e["predicted"] = gk.pred.to_json();
    kernels.push_back(e);
  }
  // Spills of loop kernels whose rows do not fit LX go to a scratch region after every buffer.
  const uint64_t scratch = spill_scratch_bytes(kernels);
  prog.dram_bytes = dram.total_bytes + scratch;
  if (g.nodes.empty())
    for (auto& c : cores) c.halt(0);
  for (auto& c : cores) prog.cores.push_back(c.instrs());
  // IBM's runtime launches every kernel as a job: its start-up comes before the first
  // instruction on every core (compile.h ibm_kernel_start_ns).
  const int64_t start_cycles =
      ibm && ngroups > 0
          ? static_cast<int64_t>(std::llround(opts.ibm_kernel_start_ns * cfg.clock_ghz))
          : 0;
  if (start_cycles > 0)
    for (auto& c : prog.cores)
      c.insert(c.begin(), isa::make_instr(isa::Opcode::Delay, {{"cycles", start_cycles}}, 0));
  // Where each kernel's instructions lie on each core (kernels without a barrier between them
  // are flushed together, so this is read off the finished streams): first and last index,
  // -1 when the core runs none of it.
  std::vector<KernelPcs> kernel_pcs(ngroups);
  for (auto& kp : kernel_pcs) kp.first.assign(prog.cores.size(), -1), kp.last = kp.first;
  for (size_t c = 0; c < prog.cores.size(); ++c)
    for (size_t i = 0; i < prog.cores[c].size(); ++i) {
      const size_t kid = prog.cores[c][i].kernel;
      if (kid >= ngroups || prog.cores[c][i].op == isa::Opcode::Delay) continue;  // start-up
      if (kernel_pcs[kid].first[c] < 0) kernel_pcs[kid].first[c] = static_cast<int64_t>(i);
      kernel_pcs[kid].last[c] = static_cast<int64_t>(i);
    }
  // Hardware loops last: the LX plan's intervals (kernel_pcs) stay in dynamic instruction
  // indices, i.e. positions in the expanded stream, which is what the trace records as "dyn".
  LoopCompressStats loop_stats;
  if (opts.hw_loops)
    for (auto& c : prog.cores) c = compress_loops(c, {}, &loop_stats);

  for (const auto& b : g.buffers) {
    if (b.kind == "view") continue;
    const DramRegion& r = dram.at(b.name);
    const uint64_t es = static_cast<uint64_t>(isa::dtype_size_bytes(b.dtype));
    isa::TensorSym t;
    t.name = b.name;
    t.role = role_of(g, b);
    t.dtype = b.dtype;
    t.size = b.size;
    t.stride = b.stride;
    t.dram_addr = r.addr + static_cast<uint64_t>(b.offset) * es;
    t.bytes = r.bytes - std::min(r.bytes, static_cast<uint64_t>(b.offset) * es);
    prog.tensors.push_back(t);
  }
  for (const auto& name : g.inputs) {
    const ir::Buffer& b = g.buffer(name);
    const uint64_t es = static_cast<uint64_t>(isa::dtype_size_bytes(g.storage_of(name).dtype));
    bool mutated = false;
    for (const auto& n : g.nodes)
      for (const auto& o : n.outputs) mutated = mutated || &g.storage_of(o) == &g.storage_of(name);
    res.inputs.push_back({name, b.dtype, b.size, b.stride,
                          dram.at(name).addr + static_cast<uint64_t>(b.offset) * es, mutated});
  }
  for (const auto& o : g.outputs) {
    const uint64_t es = static_cast<uint64_t>(isa::dtype_size_bytes(g.storage_of(o.buffer).dtype));
    res.outputs.push_back({o.buffer, o.dtype, o.size, o.stride,
                           dram.at(o.buffer).addr + static_cast<uint64_t>(o.offset) * es});
  }
  isa::validate(prog);

  nlohmann::json& rep = res.report;
  rep["graph"] = g.name;
  rep["file"] = file;
  rep["torch_version"] = g.torch_version;  // the torch that captured the IR ("" if unknown)
  rep["arch"] = cfg.name;
  rep["cores"] = cfg.cores;  // the cores the work is divided over
  rep["chip_cores"] = chip.cores;
  rep["lx_usable_bytes"] = cfg.lx_usable_bytes();
  rep["fusion_enabled"] = effective.fusion;
  rep["options"] = opts.to_json();
  rep["fusion"] = fusion.decisions;
  rep["split_reductions"] = nlohmann::json::array();
  for (const auto& sr : splits) rep["split_reductions"].push_back(sr.to_json());
  rep["column_reductions"] = nlohmann::json::array();
  for (const auto& cr : columns) rep["column_reductions"].push_back(cr.to_json());
  for (const auto& c : operand_copies) rep["operand_copies"].push_back(c.to_json());
  rep["op_steps"] = nlohmann::json::array();  // compiler.schedule=ibm: nodes split per op
  for (const auto& os : op_steps) rep["op_steps"].push_back(os.to_json());
  rep["device_dtype_intermediates"] = retyped;  // compiler.schedule=ibm: fp32 stored 16-bit
  rep["dram_plan"] = dram.to_json(scratch);
  rep["lx_plan"] = build_lx_plan(kernels, kernel_pcs, cfg, opts.debug.lx_plan_error, lxp, first);
  rep["lx_residency"] = lxp.to_json(first);
  rep["lx_residency"]["enabled"] = lx_planning;
  rep["lx_residency"]["rows_from_producers"] = joint;
  rep["kernels"] = kernels;
  rep["totals"] = {{"kernels", kernels.size()},
                   {"predicted_cycles", total_cycles + start_cycles},
                   {"start_cycles", start_cycles},
                   {"dram_bytes", total_dram},
                   {"instructions", prog.num_instructions()},
                   {"hw_loops",
                    {{"enabled", opts.hw_loops},
                     {"loops", loop_stats.loops},
                     {"instructions_expanded",
                      opts.hw_loops ? loop_stats.words_before : prog.num_instructions()}}},
                   {"dram_bytes_allocated", prog.dram_bytes}};
  return res;
}

}  // namespace spyre::compiler
