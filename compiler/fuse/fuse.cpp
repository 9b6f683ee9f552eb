// The fusion pass: greedy over nodes in schedule order, each candidate priced by lowering it
// both ways (fuse.h).
#include "spyre/compiler/fuse.h"

#include <algorithm>
#include <map>
#include <set>

#include "spyre/compiler/conv.h"
#include "spyre/compiler/host_call.h"
#include "spyre/compiler/kernel.h"
#include "spyre/compiler/parallel.h"
#include "spyre/compiler/select.h"
#include "spyre/compiler/transpose.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

bool is_loop(const ir::Node& n) { return n.kind == "pointwise" || n.kind == "reduction"; }
bool is_matmul(const ir::Node& n) {
  return n.kind == "extern" &&
         (n.kernel == "extern_kernels.mm" || n.kernel == "extern_kernels.addmm");
}

void collect_loads(const std::vector<ir::Op>& body, const ir::Graph& g,
                   std::set<std::string>& out) {
  for (const auto& op : body) {
    if (op.op == "load") out.insert(g.storage_of(op.buffer).name);
    collect_loads(op.body, g, out);
  }
}

// Storage names a node reads / writes.
std::set<std::string> reads_of(const ir::Graph& g, const ir::Node& n) {
  std::set<std::string> r;
  collect_loads(n.body, g, r);
  for (const auto& in : n.inputs)
    if (!in.buffer.empty()) r.insert(g.storage_of(in.buffer).name);
  return r;
}
std::set<std::string> writes_of(const ir::Graph& g, const ir::Node& n) {
  std::set<std::string> w;
  for (const auto& o : n.outputs) w.insert(g.storage_of(o).name);
  return w;
}

std::vector<int64_t> space_of(const ir::Node& n) {
  std::vector<int64_t> s = n.sizes;
  s.insert(s.end(), n.reduce_sizes.begin(), n.reduce_sizes.end());
  return s;
}

bool has_reduction(const ir::Graph& g, const FusionGroup& grp) {
  for (auto i : grp.nodes)
    if (g.nodes[i].kind == "reduction") return true;
  return false;
}

// Fills `merged` from `nodes`/`matmul`; false with `why` when the nodes cannot form one kernel.
bool materialize(const NodeIo& io, const ir::Graph& g, FusionGroup& grp, std::string* why) {
  grp.merged.reset();
  std::vector<const ir::Node*> loop;
  for (auto i : grp.nodes)
    if (static_cast<int64_t>(i) != grp.matmul) loop.push_back(&g.nodes[i]);
  if (grp.matmul < 0 && loop.size() < 2) return true;
  if (grp.matmul >= 0 && loop.empty()) return true;
  for (const auto* n : loop)
    if (grp.matmul >= 0 && n->kind != "pointwise") {
      *why = "a reduction (" + n->name + ") cannot run in a matmul epilogue";
      return false;
    }
  // An epilogue group's own stores decide what goes to DRAM; the matmul's output is decided
  // in lower_group.
  grp.merged = merge_loop_nodes(g, loop, live_out(io, g, grp.nodes), why);
  return grp.merged != nullptr;
}

// Kernels in this order read only what earlier kernels (or the graph's inputs) wrote.
bool order_ok(const NodeIo& io, const std::vector<FusionGroup>& groups) {
  std::set<std::string> produced;
  for (const auto& grp : groups) {
    std::set<std::string> inside;
    for (auto i : grp.nodes) {
      for (const auto& r : io.reads[i])
        if (io.written.count(r) && !produced.count(r) && !inside.count(r)) return false;
      inside.insert(io.writes[i].begin(), io.writes[i].end());
    }
    produced.insert(inside.begin(), inside.end());
  }
  return true;
}

size_t position(const FusionGroup& grp) { return grp.nodes.back(); }

void sort_groups(std::vector<FusionGroup>& groups) {
  std::stable_sort(groups.begin(), groups.end(), [](const FusionGroup& a, const FusionGroup& b) {
    return position(a) < position(b);
  });
}

nlohmann::json pred_json(const KernelPrediction& p) {
  return {{"cycles", p.cycles}, {"dram_bytes", p.dram_bytes}};
}

}  // namespace

std::string FusionGroup::name(const ir::Graph& g) const {
  std::string s;
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? "+" : "") + g.nodes[nodes[i]].name;
  return s;
}

NodeIo::NodeIo(const ir::Graph& g) {
  for (const auto& n : g.nodes) {
    reads.push_back(reads_of(g, n));
    writes.push_back(writes_of(g, n));
    written.insert(writes.back().begin(), writes.back().end());
  }
}

namespace {
// live_out with node i's reads and writes from reads(i) / writes(i).
template <class Reads, class Writes>
std::set<std::string> live_out_by(const ir::Graph& g, const std::vector<size_t>& nodes, Reads reads,
                                  Writes writes) {
  std::set<std::string> written;
  for (auto i : nodes) {
    const auto& w = writes(i);
    written.insert(w.begin(), w.end());
  }
  std::set<std::string> out;
  for (const auto& o : g.outputs)
    if (written.count(g.storage_of(o.buffer).name)) out.insert(g.storage_of(o.buffer).name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (std::find(nodes.begin(), nodes.end(), i) != nodes.end()) continue;
    for (const auto& r : reads(i))
      if (written.count(r)) out.insert(r);
  }
  return out;
}
}  // namespace

std::set<std::string> live_out(const NodeIo& io, const ir::Graph& g,
                               const std::vector<size_t>& nodes) {
  return live_out_by(
      g, nodes, [&](size_t i) -> const auto& { return io.reads[i]; },
      [&](size_t i) -> const auto& { return io.writes[i]; });
}

std::set<std::string> live_out(const ir::Graph& g, const std::vector<size_t>& nodes) {
  // One call (lower_group's epilogue): only the sets it needs, not a whole NodeIo.
  return live_out_by(
      g, nodes, [&](size_t i) { return reads_of(g, g.nodes[i]); },
      [&](size_t i) { return writes_of(g, g.nodes[i]); });
}

std::set<std::string> group_reads(const ir::Graph& g, const FusionGroup& grp) {
  std::set<std::string> inside, out;
  for (auto i : grp.nodes)
    for (const auto& w : writes_of(g, g.nodes[i])) inside.insert(w);
  for (auto i : grp.nodes)
    for (const auto& r : reads_of(g, g.nodes[i]))
      if (!inside.count(r)) out.insert(r);
  return out;
}

std::set<std::string> group_writes(const NodeIo& io, const ir::Graph& g, const FusionGroup& grp) {
  return live_out(io, g, grp.nodes);
}

GroupKernel lower_group(const CompileContext& ctx, const ir::Graph& g, const FusionGroup& grp,
                        const arch::ArchConfig& cfg, const DramPlan& dram, uint16_t id,
                        std::vector<CoreStream>& cores, bool last, const KernelLx* lx) {
  const bool mm = grp.matmul >= 0;
  const ir::Node& n = mm           ? g.nodes[static_cast<size_t>(grp.matmul)]
                      : grp.merged ? *grp.merged
                                   : g.nodes[grp.nodes[0]];
  Kernel k{ctx,  g,  n,     cfg,
           dram, id, cores, LxArena(0, cfg.stick_bytes, ctx.opts.debug.lx_plan_error)};
  if (lx) {
    k.resident = lx->resident;
    k.lx_top = lx->lx_top;
    k.rows_plan = lx->rows;
    k.grid = lx->grid;
    k.whole_rows = lx->whole_rows;
  }
  if (mm) {
    k.epilogue = grp.merged.get();
    if (k.epilogue) {
      const auto keep = live_out(g, grp.nodes);
      k.store_output = keep.count(g.storage_of(n.outputs.at(0)).name) > 0;
    }
    n.kernel == "extern_kernels.convolution" ? lower_conv(k) : lower_matmul(k);
  } else if (n.kind == "extern" && n.kernel == "extern_kernels.convolution") {
    lower_conv(k);
  } else if (runs_on_host(n, ctx.opts.host_fallback)) {  // host_call.h
    lower_host_call(k);
  } else if (n.kind == "fallback") {  // topk / median (select.h); load_ir refused the rest
    lower_select(k);
  } else if (n.kind == "extern") {
    if (n.kernel != "extern_kernels.bmm" && !is_matmul(n))
      throw Error(g.file + ": " + ir::describe(n), "unsupported extern kernel " + n.kernel);
    lower_matmul(k);
  } else if (!k.resident.empty() || !lower_layout_copy(k)) {  // a pure layout copy may be a
    lower_loops(k);  // blocked transpose (a kernel with LX-resident buffers was lowered as loops)
  }
  if (k.lx.used_bytes() > k.lx_budget())
    throw Error(g.file + ": " + ir::describe(n),
                "working set does not fit LX: " + std::to_string(k.lx.used_bytes()) + " bytes, " +
                    std::to_string(k.lx_budget()) + " usable");
  std::vector<std::vector<isa::Instr>> slices;
  for (auto& c : cores) {
    if (last)
      c.halt(id);
    else if (!lx || lx->barrier_after)
      c.barrier(id);
    slices.push_back(c.kernel_instrs(id));
  }
  GroupKernel out;
  out.pred = predict_kernel(ctx, slices, cfg);
  out.division = k.division;
  out.grid = k.grid;
  for (const auto& sl : slices)
    for (const auto& in : sl)
      out.cross_core = out.cross_core || in.op == isa::Opcode::RingSend ||
                       in.op == isa::Opcode::RingReduce ||
                       (in.op == isa::Opcode::DmaLoad && SPYRE_OPERAND(in, "mcast") != 0) ||
                       (in.op == isa::Opcode::Signal && SPYRE_OPERAND(in, "core") >= 0);
  out.report = k.report;
  out.report["lx"] = {{"peak_bytes", k.lx.used_bytes()}, {"plan", k.lx.to_json()}};
  out.lx_bytes = k.lx.used_bytes();
  return out;
}

FusionPlan plan_fusion(const CompileContext& ctx, const ir::Graph& g, const arch::ArchConfig& cfg,
                       const DramPlan& dram) {
  const bool enabled = ctx.opts.fusion;
  const int64_t limit = ctx.opts.fusion_limit;
  FusionPlan plan;
  std::vector<FusionGroup>& groups = plan.groups;
  const NodeIo io(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    FusionGroup grp;
    grp.nodes = {i};
    if (g.nodes[i].kind == "extern" &&
        (is_matmul(g.nodes[i]) || g.nodes[i].kernel == "extern_kernels.convolution"))
      grp.matmul = static_cast<int64_t>(i);  // a PT node: pointwise successors are epilogues
    // A MultiOutput node is a view of a tuple element its fallback's kernel writes: no kernel.
    if (g.nodes[i].kernel == "MultiOutput" && !groups.empty()) {
      for (auto& p : groups)
        for (const auto& w : io.writes[p.nodes[0]])
          if (!g.nodes[i].inputs.empty() && w == g.nodes[i].inputs[0].buffer) p.nodes.push_back(i);
      continue;
    }
    groups.push_back(grp);
  }
  if (!enabled) return plan;

  // Each group's own prediction, from a trial lowering into scratch streams.
  auto trial = [&](const FusionGroup& grp) {
    std::vector<CoreStream> scratch(static_cast<size_t>(cfg.cores));
    return lower_group(ctx, g, grp, cfg, dram, 0, scratch, true).pred;
  };
  std::map<std::string, KernelPrediction> cost;
  auto cost_of = [&](const FusionGroup& grp) {
    const std::string key = grp.name(g);
    auto it = cost.find(key);
    if (it == cost.end()) it = cost.emplace(key, trial(grp)).first;
    return it->second;
  };
  // Every group's own trial first. They are independent of each other, so they run on up to
  // compiler.threads threads (parallel.h); each prediction is entered in group order, and the
  // first group that cannot lower throws, as unfused.
  {
    std::vector<size_t> todo;
    std::set<std::string> named;
    for (size_t i = 0; i < groups.size(); ++i)
      if (named.insert(groups[i].name(g)).second) todo.push_back(i);
    std::vector<KernelPrediction> preds(todo.size());
    for_each_index(todo.size(), ctx.opts.threads,
                   [&](size_t t) { preds[t] = trial(groups[todo[t]]); });
    for (size_t t = 0; t < todo.size(); ++t) cost.emplace(groups[todo[t]].name(g), preds[t]);
  }

  int64_t taken = 0;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& n = g.nodes[ni];
    if (!is_loop(n)) continue;
    // n's own group; `groups` changes only when a candidate is taken, and then the loop below
    // moves on to the next node.
    const size_t self = [&]() {
      for (size_t i = 0; i < groups.size(); ++i)
        if (groups[i].nodes.size() == 1 && groups[i].nodes[0] == ni) return i;
      return groups.size();
    }();
    // Candidates: the groups producing what n reads (latest first), then the latest loop group
    // with the same iteration space and no producer relation (horizontal).
    const auto& reads = io.reads[ni];
    std::vector<std::pair<size_t, std::string>> cands;  // group index, kind
    for (size_t gi = groups.size(); gi-- > 0;) {
      const FusionGroup& p = groups[gi];
      if (position(p) >= ni) continue;
      bool produces = false;
      for (auto i : p.nodes)
        for (const auto& w : io.writes[i]) produces = produces || reads.count(w);
      if (!produces) continue;
      std::string kind = p.matmul >= 0                                    ? "epilogue"
                         : (n.kind == "reduction" || has_reduction(g, p)) ? "reduction"
                                                                          : "pointwise";
      cands.emplace_back(gi, kind);
    }
    // The horizontal candidate is tried after the producers too: LayerNorm's m2 node reads only
    // a matmul's output (no legal producer group) but shares its input with the mean node.
    for (size_t gi = groups.size(); gi-- > 0;) {
      const FusionGroup& p = groups[gi];
      if (position(p) >= ni || p.matmul >= 0 || g.nodes[p.nodes[0]].kind == "extern") continue;
      const bool listed =
          std::any_of(cands.begin(), cands.end(), [&](const auto& c) { return c.first == gi; });
      if (!listed && space_of(g.nodes[p.nodes[0]]) == space_of(n))
        cands.emplace_back(gi, "horizontal");
      break;
    }
    for (const auto& [gi, kind] : cands) {
      FusionGroup fused = groups[gi];
      fused.nodes.push_back(ni);
      std::sort(fused.nodes.begin(), fused.nodes.end());
      fused.kind = kind;
      nlohmann::json d = {{"group", nlohmann::json::array()}, {"kind", kind}, {"taken", false}};
      for (auto i : fused.nodes) d["group"].push_back(g.nodes[i].name);
      const KernelPrediction a = cost_of(groups[gi]), b = cost_of(groups[self]);
      KernelPrediction before;
      before.cycles = a.cycles + b.cycles;
      before.dram_bytes = a.dram_bytes + b.dram_bytes;
      d["predicted"] = {{"before", pred_json(before)}, {"after", nullptr}};
      std::string why;
      std::vector<FusionGroup> next;
      for (size_t i = 0; i < groups.size(); ++i)
        if (i != gi && i != self) next.push_back(groups[i]);
      next.push_back(fused);
      sort_groups(next);
      if (limit >= 0 && taken >= limit) {
        d["reason"] = "fusion limit (compiler.fusion_limit=" + std::to_string(limit) + ") reached";
      } else if (!order_ok(io, next)) {
        d["reason"] = "a kernel scheduled between them needs the producer's output first";
      } else if (!materialize(io, g, fused, &why)) {
        d["reason"] = why;
      } else {
        try {
          const KernelPrediction after = cost_of(fused);
          d["predicted"]["after"] = pred_json(after);
          const bool saves = after.cycles < before.cycles || (after.cycles == before.cycles &&
                                                              after.dram_bytes < before.dram_bytes);
          // compiler.debug.force_fusion: take it anyway (a planted harmful fusion).
          const bool forced = !saves && ctx.opts.debug.forces(plan.decisions.size());
          d["taken"] = saves || forced;
          if (forced) d["forced"] = true;
          d["reason"] = saves ? "predicted to save " +
                                    std::to_string(before.cycles - after.cycles) + " cycles and " +
                                    std::to_string(before.dram_bytes - after.dram_bytes) +
                                    " DRAM bytes"
                              : "predicted no saving (" + std::to_string(after.cycles) +
                                    " cycles fused, " + std::to_string(before.cycles) + " unfused)";
          if (forced)
            d["reason"] = d["reason"].get<std::string>() + "; taken by compiler.debug.force_fusion";
        } catch (const Error& e) {
          d["reason"] = std::string("cannot lower fused: ") + e.what();
        }
      }
      plan.decisions.push_back(d);
      if (d["taken"].get<bool>()) {
        ++taken;
        groups = next;
        for (auto& grp : groups)
          if (grp.nodes == fused.nodes) grp = fused;
        break;
      }
    }
  }
  return plan;
}

}  // namespace spyre::compiler
