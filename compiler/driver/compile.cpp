// The compiler's driver: load and validate the IR, plan DRAM, lower each node to one kernel
// (all cores meet at a barrier between kernels; data passes through DRAM), predict, report.
#include "spyre/compiler/compile.h"

#include "spyre/compiler/cost.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/dram_plan.h"
#include "spyre/compiler/fuse.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

std::string kernel_name(const ir::Node& n);

std::string kernel_name(const ir::Graph& g, const FusionGroup& grp) {
  if (grp.nodes.size() == 1) return kernel_name(g.nodes[grp.nodes[0]]);
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
  if (n.kind == "extern" || n.kind == "fallback") {
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
    if (value == "true" || value == "1" || value == "on")
      fusion = true;
    else if (value == "false" || value == "0" || value == "off")
      fusion = false;
    else
      throw Error("compiler.fusion", "expected true or false, got '" + value + "'");
    return;
  }
  if (key == "matmul_split") {
    std::vector<std::string> tokens(1);
    for (char c : value) {
      if (c == ',')
        tokens.emplace_back();
      else
        tokens.back() += c;
    }
    std::array<int64_t, 4> parts{};
    bool ok = tokens.size() == 4;
    for (size_t i = 0; ok && i < 4; ++i) {
      try {
        size_t used = 0;
        parts[i] = std::stoll(tokens[i], &used);
        ok = used == tokens[i].size() && parts[i] >= 1;
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok)
      throw Error(
          "compiler.matmul_split",
          "expected four positive integers b,m,n,k (parts of batch, M, N, K), got '" + value + "'");
    matmul_split = parts;
    return;
  }
  throw Error("compiler." + key,
              "unknown compiler option (known: fusion, fusion_limit, matmul_split)");
}

CompileResult compile(const nlohmann::json& j, const arch::ArchConfig& cfg,
                      const CompileOptions& opts, const std::string& file) {
  cfg.validate();
  MatmulSplit split;
  split.parts = opts.matmul_split;
  const ScopedMatmulSplit scoped_split(split);
  const ir::Graph g = ir::load_ir(j, file);
  const DramPlan dram = plan_dram(g, cfg);

  CompileResult res;
  isa::Program& prog = res.program;
  prog.num_cores = static_cast<uint32_t>(cfg.cores);
  prog.dram_bytes = dram.total_bytes;
  std::vector<CoreStream> cores(static_cast<size_t>(cfg.cores));

  const FusionPlan fusion = plan_fusion(g, cfg, dram, opts.fusion, opts.fusion_limit);
  nlohmann::json kernels = nlohmann::json::array();
  int64_t total_cycles = 0, total_dram = 0;
  for (size_t gi = 0; gi < fusion.groups.size(); ++gi) {
    const FusionGroup& grp = fusion.groups[gi];
    const auto id = static_cast<uint16_t>(gi);
    prog.kernels.push_back(kernel_name(g, grp));
    GroupKernel gk = lower_group(g, grp, cfg, dram, id, cores, gi + 1 == fusion.groups.size());
    total_cycles += gk.pred.cycles;
    total_dram += gk.pred.dram_bytes;
    const ir::Node& lead =
        g.nodes[grp.matmul >= 0 ? static_cast<size_t>(grp.matmul) : grp.nodes[0]];
    nlohmann::json e = gk.report;
    e["id"] = id;
    e["name"] = prog.kernels.back();
    e["node"] = grp.name(g);
    e["fusion_group"] =
        grp.nodes.size() > 1 ? nlohmann::json(grp.name(g)) : nlohmann::json(nullptr);
    e["nodes"] = nlohmann::json::array();
    nlohmann::json aten = nlohmann::json::array();
    for (auto i : grp.nodes) {
      e["nodes"].push_back(g.nodes[i].name);
      for (const auto& a : g.nodes[i].aten) aten.push_back(a);
    }
    e["kind"] = grp.nodes.size() > 1 ? "fused:" + grp.kind : lead.kind;
    e["aten"] = aten;
    e["source"] = lead.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(lead.source);
    if (!lead.kernel.empty()) e["kernel"] = lead.kernel;
    e["predicted"] = gk.pred.to_json();
    kernels.push_back(e);
  }
  if (g.nodes.empty())
    for (auto& c : cores) c.halt(0);
  for (auto& c : cores) prog.cores.push_back(c.instrs());

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
    res.inputs.push_back({name, b.dtype, b.size, b.stride,
                          dram.at(name).addr + static_cast<uint64_t>(b.offset) * es});
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
  rep["arch"] = cfg.name;
  rep["cores"] = cfg.cores;
  rep["lx_usable_bytes"] = cfg.lx_usable_bytes();
  rep["fusion_enabled"] = opts.fusion;
  rep["fusion"] = fusion.decisions;
  rep["dram_plan"] = dram.to_json();
  rep["kernels"] = kernels;
  rep["totals"] = {{"kernels", kernels.size()},
                   {"predicted_cycles", total_cycles},
                   {"dram_bytes", total_dram},
                   {"instructions", prog.num_instructions()},
                   {"dram_bytes_allocated", dram.total_bytes}};
  return res;
}

}  // namespace spyre::compiler
