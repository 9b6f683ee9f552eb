// The compiler's driver: load and validate the IR, plan DRAM, lower each node to one kernel
// (all cores meet at a barrier between kernels; data passes through DRAM), predict, report.
#include "spyre/compiler/compile.h"

#include "spyre/compiler/cost.h"
#include "spyre/compiler/dram_plan.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

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

bool is_matmul(const std::string& kernel) {
  return kernel == "extern_kernels.mm" || kernel == "extern_kernels.addmm" ||
         kernel == "extern_kernels.bmm";
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
  if (key == "fusion") {
    if (value == "true" || value == "1" || value == "on") fusion = true;
    else if (value == "false" || value == "0" || value == "off") fusion = false;
    else throw Error("compiler.fusion", "expected true or false, got '" + value + "'");
    return;
  }
  throw Error("compiler." + key, "unknown compiler option (known: fusion)");
}

CompileResult compile(const nlohmann::json& j, const arch::ArchConfig& cfg,
                      const CompileOptions& opts, const std::string& file) {
  cfg.validate();
  const ir::Graph g = ir::load_ir(j, file);
  const DramPlan dram = plan_dram(g, cfg);

  CompileResult res;
  isa::Program& prog = res.program;
  prog.num_cores = static_cast<uint32_t>(cfg.cores);
  prog.dram_bytes = dram.total_bytes;
  std::vector<CoreStream> cores(static_cast<size_t>(cfg.cores));

  nlohmann::json kernels = nlohmann::json::array();
  int64_t total_cycles = 0, total_dram = 0;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& n = g.nodes[ni];
    const auto id = static_cast<uint16_t>(ni);
    prog.kernels.push_back(kernel_name(n));
    Kernel k{g, n, cfg, dram, id, cores, LxArena(0, cfg.stick_bytes)};
    if (n.kind == "extern") {
      if (!is_matmul(n.kernel))
        throw Error(g.file + ": " + ir::describe(n), "unsupported extern kernel " + n.kernel);
      lower_matmul(k);
    } else {
      lower_loops(k);
    }
    if (k.lx.used_bytes() > cfg.lx_usable_bytes())
      throw Error(g.file + ": " + ir::describe(n),
                  "working set does not fit LX: " + std::to_string(k.lx.used_bytes()) + " bytes, " +
                      std::to_string(cfg.lx_usable_bytes()) + " usable");
    // Close the kernel on every core and predict it from its instructions.
    std::vector<std::vector<isa::Instr>> slices;
    const bool last = ni + 1 == g.nodes.size();
    for (auto& c : cores) {
      size_t from = c.instrs().size();
      last ? c.halt(id) : c.barrier(id);
      slices.emplace_back(c.instrs().begin() + static_cast<std::ptrdiff_t>(from), c.instrs().end());
    }
    KernelPrediction pred = predict(slices, cfg);
    total_cycles += pred.cycles;
    total_dram += pred.dram_bytes;
    nlohmann::json e = k.report;
    e["id"] = id;
    e["name"] = prog.kernels.back();
    e["node"] = n.name;
    e["kind"] = n.kind;
    e["aten"] = n.aten;
    e["source"] = n.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.source);
    if (!n.kernel.empty()) e["kernel"] = n.kernel;
    e["lx"] = {{"peak_bytes", k.lx.used_bytes()}, {"plan", k.lx.to_json()}};
    e["predicted"] = pred.to_json();
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
  rep["fusion"] = {{"requested", opts.fusion}, {"groups", nlohmann::json::array()},
                   {"note", "not implemented yet: one kernel per IR node"}};
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
