// The analysis behind the column walk (loops_columns.h): each value's class, each op's pass,
// which chunk values are recomputed in a later pass and which are spilled, and per pass the
// chunk values the arena holds with their live intervals. Split from loops_columns.cpp, which
// places and emits what this decides.
#include <algorithm>
#include <climits>

#include "loops_columns.h"

namespace spyre::compiler::columns_detail {

int ColumnPlan::def_pass(int v) const {
  return pass[static_cast<size_t>(def_op[static_cast<size_t>(v)])];
}

ColumnPlan plan_columns(const TileProgram& p, const arch::ArchConfig& cfg, int64_t active,
                        const std::function<void(const std::string&)>& fail) {
  const IterSpace& s = p.space;
  const auto& ops = p.ops;
  const size_t nops = ops.size(), nvals = p.vals.size();
  auto es = [&](int v) {
    return static_cast<int64_t>(isa::dtype_size_bytes(p.vals[static_cast<size_t>(v)].dt));
  };
  auto along_c = [&](int a) { return s.col.size > 1 && s.col.coeff[static_cast<size_t>(a)] != 0; };
  // --- classes and passes
  // A value's class is the widest of its own and its operands' (a reduction's result is a row
  // value even when what it reduces does not depend on the row).
  std::vector<Cls> cls(nvals, Cls::Const);
  for (size_t v = 0; v < nvals; ++v)
    cls[v] = p.vals[v].c ? Cls::Chunk : p.vals[v].tiled ? Cls::Row : Cls::Const;
  auto cl_of = [&](int v) { return cls[static_cast<size_t>(v)]; };
  for (const auto& op : ops) {
    if (op.dst < 0 || op.kind == TOp::Load) continue;
    Cls& c = cls[static_cast<size_t>(op.dst)];
    if (op.kind == TOp::Reduce) {
      c = Cls::Row;
      continue;
    }
    for (int v : op.src) c = std::max(c, cl_of(v));
  }
  std::vector<int> def_op(nvals, -1), pass(nops, 0);
  auto avail = [&](int v) {
    const int d = def_op[static_cast<size_t>(v)];
    if (d < 0 || cl_of(v) == Cls::Const || ops[static_cast<size_t>(d)].kind == TOp::Load) return 0;
    return pass[static_cast<size_t>(d)] + (ops[static_cast<size_t>(d)].kind == TOp::Reduce ? 1 : 0);
  };
  auto is_compute = [&](const TOp& op) { return op.kind != TOp::Load && op.kind != TOp::Store; };
  if (s.blocked) fail("a blocked (transposed) iteration space");
  for (size_t i = 0; i < nops; ++i) {
    const TOp& op = ops[i];
    if (op.kind == TOp::Gather) fail("a gather (indirect load) is not chunked");
    if (op.kind == TOp::Scatter) fail("a scatter (indirect store) is not chunked");
    if (op.kind == TOp::Reduce) {
      if (op.fn == isa::SfpFn::ArgMax || op.fn == isa::SfpFn::ArgMin)
        fail("argmax/argmin cannot accumulate across chunks");
      if (cl_of(op.src[0]) != Cls::Chunk)
        fail("a reduction of a value that does not vary along the columns");
    } else if (is_compute(op) && op.dst >= 0 && cl_of(op.dst) != Cls::Chunk) {
      for (int v : op.src)
        if (cl_of(v) == Cls::Chunk) fail("a per-row value computed from a column-varying one");
    }
    if (is_compute(op))
      for (int v : op.src) pass[i] = std::max(pass[i], avail(v));
    if (op.dst >= 0) def_op[static_cast<size_t>(op.dst)] = static_cast<int>(i);
  }
  // Sink each chunk op to the earliest pass of its readers (stores follow their value).
  for (size_t i = nops; i-- > 0;) {
    const TOp& op = ops[i];
    if (!is_compute(op) || op.kind == TOp::Reduce || op.dst < 0 || cl_of(op.dst) != Cls::Chunk)
      continue;
    int lo = INT_MAX;
    for (size_t j = i + 1; j < nops; ++j)
      if (ops[j].kind != TOp::Store &&
          std::find(ops[j].src.begin(), ops[j].src.end(), op.dst) != ops[j].src.end())
        lo = std::min(lo, pass[j]);
    if (lo != INT_MAX && lo > pass[i]) pass[i] = lo;
  }
  // A store along the columns runs in its value's pass; others at the end of the row.
  std::vector<int> spass(nops, -1);
  int last_pass = 0;
  for (size_t i = 0; i < nops; ++i) {
    const TOp& op = ops[i];
    if (op.kind == TOp::Store && along_c(op.access)) spass[i] = avail(op.src[0]);
    if (op.kind == TOp::Store) last_pass = std::max(last_pass, spass[i]);
    if (is_compute(op) && (op.kind == TOp::Reduce || cl_of(op.dst) == Cls::Chunk))
      last_pass = std::max(last_pass, pass[i]);
  }
  const int P = last_pass + 1;

  // --- per pass: the chunk values it holds and their intervals; which values spill
  const int64_t end_pos = static_cast<int64_t>(nops) + 2;
  std::vector<std::map<int, Interval>> live(static_cast<size_t>(P));
  std::set<int> spilled;
  auto chunk_pass = [&](size_t i) {  // the pass an op touches chunks in, or -1
    const TOp& op = ops[i];
    if (op.kind == TOp::Store) return spass[i];
    if (!is_compute(op) || (op.kind != TOp::Reduce && cl_of(op.dst) != Cls::Chunk)) return -1;
    return pass[i];
  };
  // A chunk value read in a later pass than it is computed in is either recomputed there (its
  // chain of chunk ops, back to loads and per-row values, runs again and the loads are
  // re-issued) or spilled (written to DRAM and read back), whichever costs this worker less per
  // element: SFP cycles of the chain plus its loads' DRAM bytes, against twice the value's bytes,
  // DRAM bytes counted at the worker's share of the chip's bandwidth. Few rows leave the SFP
  // the bottleneck (softmax's exp(x - max) is spilled); many rows share DRAM among many
  // workers (it is recomputed); a conversion of a loaded value is always recomputed.
  std::vector<std::set<int>> extra(nops);  // further passes an op is recomputed in
  auto passes_of = [&](size_t i) {
    std::vector<int> qs(extra[i].begin(), extra[i].end());
    if (chunk_pass(i) >= 0) qs.push_back(chunk_pass(i));
    return qs;
  };
  const double bw_share =
      cfg.dram_bytes_per_cycle() / static_cast<double>(std::max<int64_t>(1, active));
  auto sfp_per_elem = [&](const TOp& op) {
    const int64_t b = es(op.dst);
    const double lanes = static_cast<double>(b == 1   ? cfg.sfp_lanes_8bit
                                             : b == 2 ? cfg.sfp_lanes_fp16
                                             : b == 4 ? cfg.sfp_lanes_fp32
                                                      : cfg.sfp_lanes_64bit);
    double cpv = static_cast<double>(cfg.sfp_simple_cycles_per_vector);
    if (op.kind == TOp::Convert) cpv = static_cast<double>(cfg.sfp_convert_cycles_per_vector);
    if (op.kind == TOp::Unary || op.kind == TOp::Binary) {
      const auto cls_fn = isa::sfp_fn_info(op.fn).cls;
      if (cls_fn == isa::SfpClass::Transcendental)
        cpv *= static_cast<double>(cfg.sfp_transcendental_factor);
      if (cls_fn == isa::SfpClass::Compare)
        cpv = static_cast<double>(cfg.sfp_compare_cycles_per_vector);
    }
    return cpv / lanes;
  };
  std::map<int, std::pair<double, double>> spill_cost;  // value -> (spill, recompute) per element
  for (size_t i = nops; i-- > 0;) {
    const TOp& op = ops[i];
    if (!is_compute(op) || op.kind == TOp::Reduce || op.dst < 0 || cl_of(op.dst) != Cls::Chunk)
      continue;
    std::set<int> later;
    for (size_t j = i + 1; j < nops; ++j)
      if (std::find(ops[j].src.begin(), ops[j].src.end(), op.dst) != ops[j].src.end())
        for (int q : passes_of(j))
          if (q > pass[i]) later.insert(q);
    for (int q : later) {
      if (extra[i].count(q)) continue;
      // The chain: chunk ops that must run again in q for this value.
      std::set<size_t> chain;
      std::vector<size_t> todo = {i};
      double recompute = 0;
      while (!todo.empty()) {
        const size_t o = todo.back();
        todo.pop_back();
        if (!chain.insert(o).second) continue;
        recompute += sfp_per_elem(ops[o]);
        for (int v : ops[o].src) {
          if (cl_of(v) != Cls::Chunk) continue;
          const auto d = static_cast<size_t>(def_op[static_cast<size_t>(v)]);
          if (ops[d].kind == TOp::Load)
            recompute += static_cast<double>(es(v)) / bw_share;
          else if (pass[d] != q && !extra[d].count(q))
            todo.push_back(d);
        }
      }
      const double spill = 2.0 * static_cast<double>(es(op.dst)) / bw_share;
      spill_cost[op.dst] = {spill, recompute};
      if (recompute <= spill)
        for (size_t o : chain) extra[o].insert(q);
    }
  }
  for (size_t i = 0; i < nops; ++i)
    for (int q : passes_of(i)) {
      auto& lq = live[static_cast<size_t>(q)];
      const int64_t at = ops[i].kind == TOp::Store ? end_pos : static_cast<int64_t>(i) + 1;
      for (int v : ops[i].src) {
        if (cl_of(v) != Cls::Chunk) continue;
        const auto d = static_cast<size_t>(def_op[static_cast<size_t>(v)]);
        const bool here = ops[d].kind == TOp::Load || pass[d] == q || extra[d].count(q);
        if (!here) spilled.insert(v);
        auto it = lq.find(v);
        if (it == lq.end()) it = lq.emplace(v, Interval{0, at}).first;  // loaded or reloaded
        it->second.last = std::max(it->second.last, at);
      }
      if (ops[i].kind != TOp::Store && ops[i].kind != TOp::Reduce)
        lq[ops[i].dst] = Interval{static_cast<int64_t>(i) + 1, static_cast<int64_t>(i) + 1};
    }
  auto def_pass = [&](int v) { return pass[static_cast<size_t>(def_op[static_cast<size_t>(v)])]; };
  std::map<int, std::vector<int>> reread;  // spilled value -> the passes that load it back
  for (int v : spilled) {
    live[static_cast<size_t>(def_pass(v))].at(v).last = end_pos;
    for (int q = def_pass(v) + 1; q < P; ++q)
      if (live[static_cast<size_t>(q)].count(v)) reread[v].push_back(q);
  }

  ColumnPlan cp;
  for (size_t i = 0; i < nops; ++i) cp.chunk_pass.push_back(chunk_pass(i));  // before the moves
  cp.cls = std::move(cls);
  cp.def_op = std::move(def_op);
  cp.pass = std::move(pass);
  cp.store_pass = std::move(spass);
  cp.passes = P;
  cp.extra = std::move(extra);
  cp.live = std::move(live);
  cp.spilled = std::move(spilled);
  cp.reread = std::move(reread);
  cp.spill_cost = std::move(spill_cost);
  return cp;
}

}  // namespace spyre::compiler::columns_detail
