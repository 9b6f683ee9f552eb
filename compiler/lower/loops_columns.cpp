// Loop kernels whose single row does not fit LX, walked in column chunks (loops_columns.h).
//
// Every value of the tile program gets a class: `chunk` (varies along the columns: lives in
// the chunk arena, one chunk of cw columns at a time), `row` (one value per row: a reduction's
// result or what is computed from it; a small per-row region) or `const` (neither: hoisted once
// per core). Rows are taken one at a time (tile height 1). A reduction accumulates over the
// row's chunks (sfp.red acc=1 after the first chunk), so an op that needs its result can only
// run in a later walk over the chunks: each op gets a pass, the number of reductions on its
// dependency path (softmax: max in pass 0, exp and the sum in pass 1, the division in pass 2).
// Inputs are re-loaded from DRAM in every pass that reads them; an op is computed in the
// latest pass that still serves all its readers (so x*w needed only after a reduction is not
// computed early); a chunk value computed in one pass and read in a later one is either
// recomputed there or spilled: its chunks stored to the DRAM scratch region and loaded back in
// the later pass, whichever is cheaper per element (see the cost below).
// Steps (row, pass, chunk) of a worker alternate between two arenas: the loads of step i+1 are
// emitted before the compute of step i, so DMA overlaps the SFP (the stream's tokens do the
// ping-pong). Each pass has its own first-fit layout of the arena; row values alternate
// between two regions by row parity, so the next row's loads do not wait for this row's stores.
#include "loops_columns.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>

#include "sfp_emit.h"
#include "spyre/compiler/divide.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

using columns_detail::Cls;
using columns_detail::ColumnPlan;
using columns_detail::Interval;

// One step of a worker's walk: row u (flat over outer x rows), pass q, chunk j; i counts the
// worker's steps (its parity picks the arena), rp is the row's parity (picks the row region).
struct Step {
  int64_t u = 0;
  int q = 0;
  int64_t j = 0, i = 0, rp = 0;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// First-fit placement of intervals (by def position); returns the arena's bytes.
int64_t first_fit(const std::map<int, Interval>& live, const std::function<int64_t(int)>& size,
                  std::map<int, int64_t>& offset) {
  std::vector<std::pair<int, Interval>> order(live.begin(), live.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.second.def < y.second.def; });
  struct Block {
    int64_t off, size, end;
  };
  std::vector<Block> active;
  int64_t bytes = 0;
  for (const auto& [v, range] : order) {
    const auto def = range.def;  // C++17 lambdas cannot capture a structured binding
    active.erase(
        std::remove_if(active.begin(), active.end(), [def](const Block& b) { return b.end < def; }),
        active.end());
    std::sort(active.begin(), active.end(),
              [](const Block& x, const Block& y) { return x.off < y.off; });
    const int64_t sz = size(v);
    int64_t at = 0;
    for (const auto& b : active) {
      if (b.off >= at + sz) break;
      at = std::max(at, b.off + b.size);
    }
    active.push_back({at, sz, range.last});
    offset[v] = at;
    bytes = std::max(bytes, at + sz);
  }
  return bytes;
}

std::string value_name(const TileProgram& p, int v) {
  for (const auto& op : p.ops) {
    if (op.dst != v) continue;
    std::string what = "value";
    switch (op.kind) {
      case TOp::Unary:
      case TOp::Binary:
      case TOp::Reduce: what = std::string(isa::sfp_fn_info(op.fn).name); break;
      case TOp::Select: what = "select"; break;
      case TOp::Convert: what = "convert"; break;
      case TOp::Iota: what = "index"; break;
      case TOp::Load: what = "load " + p.accesses[static_cast<size_t>(op.access)].buffer; break;
      case TOp::Gather: what = "gather"; break;
      case TOp::Fill: what = "fill"; break;
      case TOp::Store:
      case TOp::Scatter: break;
    }
    return "v" + std::to_string(v) + " (" + what + ")";
  }
  return "v" + std::to_string(v);
}

}  // namespace

void lower_loops_columns(Kernel& k, const TileProgram& p, const std::string& where) {
  const IterSpace& s = p.space;
  const arch::ArchConfig& cfg = k.cfg;
  const int64_t C = s.col.size, R = s.row.size, U = s.rows_total(), stick = cfg.stick_bytes;
  const auto& ops = p.ops;
  const size_t nops = ops.size(), nvals = p.vals.size();
  auto val = [&](int v) -> const TVal& { return p.vals[static_cast<size_t>(v)]; };
  auto es = [&](int v) { return static_cast<int64_t>(isa::dtype_size_bytes(val(v).dt)); };
  const std::string row_msg = "one row of " + std::to_string(C) + " columns does not fit LX";
  auto fail = [&](const std::string& what) {
    throw Error(where, row_msg + " and cannot be walked in column chunks: " + what);
  };
  for (const auto& op : ops) {
    if (op.kind == TOp::Gather) fail("it has a gather (an indirect load)");
    if (op.kind == TOp::Scatter) fail("it has a scatter (an indirect store)");
  }
  auto along_c = [&](int a) { return s.col.size > 1 && s.col.coeff[static_cast<size_t>(a)] != 0; };

  // --- work division: rows over cores, then over corelets (as loops.cpp)
  struct Range {
    int64_t lo, hi;
  };
  std::vector<std::vector<Range>> workers(static_cast<size_t>(cfg.cores));
  int64_t rows_w = 0, cores_used = 0, nworkers = 1;
  auto per_core = split_range(U, cfg.cores);
  for (size_t c = 0; c < per_core.size(); ++c) {
    auto [lo, hi] = per_core[c];
    for (auto [a, b] : split_range(hi - lo, cfg.corelets)) {
      workers[c].push_back({lo + a, lo + b});
      rows_w = std::max(rows_w, b - a);
    }
    nworkers = std::max<int64_t>(nworkers, static_cast<int64_t>(workers[c].size()));
    ++cores_used;
  }

  if (nworkers > 2) fail("more than two corelets per core (the arenas are laid out for two)");

  // --- classes, passes, what is recomputed and what spills (loops_columns_plan.cpp)
  int64_t active = 0;
  for (const auto& ws : workers) active += static_cast<int64_t>(ws.size());
  const ColumnPlan cp = columns_detail::plan_columns(p, cfg, active, fail);
  const int P = cp.passes;
  const auto& pass = cp.pass;
  const auto& spass = cp.store_pass;
  const auto& live = cp.live;
  const auto& spilled = cp.spilled;
  auto cl_of = [&](int v) { return cp.cls[static_cast<size_t>(v)]; };
  auto def_pass = [&](int v) { return cp.def_pass(v); };
  auto is_compute = [](const TOp& op) { return op.kind != TOp::Load && op.kind != TOp::Store; };

  // --- LX: hoisted constants, iota scalars, row regions, then the chunk arenas
  std::map<int, int64_t> hoisted, row_off;
  for (const auto& op : ops)
    if (op.dst >= 0 && cl_of(op.dst) == Cls::Const && !hoisted.count(op.dst))
      hoisted[op.dst] = k.lx.alloc("const_v" + std::to_string(op.dst), round_up(es(op.dst), stick));
  bool has_iota = false;
  for (const auto& op : ops) has_iota = has_iota || op.kind == TOp::Iota;
  int64_t iota_scratch[2] = {0, 0};
  if (has_iota)
    for (int w = 0; w < nworkers; ++w)
      iota_scratch[w] = k.lx.alloc("iota_scalar_cl" + std::to_string(w), stick);
  int64_t row_bytes = 0;
  for (size_t v = 0; v < nvals; ++v)
    if (cp.cls[v] == Cls::Row && cp.def_op[v] >= 0) {
      row_off[static_cast<int>(v)] = row_bytes;
      row_bytes += round_up(es(static_cast<int>(v)), stick);
    }
  int64_t row_base[2][2] = {{0, 0}, {0, 0}};
  if (row_bytes > 0)
    for (int w = 0; w < nworkers; ++w)
      for (int b = 0; b < 2; ++b)
        row_base[w][b] =
            k.lx.alloc("row_cl" + std::to_string(w) + "_buf" + std::to_string(b), row_bytes);
  std::vector<std::map<int, int64_t>> arena_off(static_cast<size_t>(P));
  auto plan = [&](int64_t cw) {
    int64_t bytes = 0;
    for (int q = 0; q < P; ++q)
      bytes = std::max(bytes, first_fit(
                                  live[static_cast<size_t>(q)],
                                  [&](int v) { return round_up(cw * es(v), stick); },
                                  arena_off[static_cast<size_t>(q)]));
    return bytes;
  };
  const int64_t budget = k.lx_budget() - k.lx.used_bytes();
  const int64_t unit = stick;  // columns per step of the search: whole sticks for every dtype
  auto fits = [&](int64_t n) { return nworkers * 2 * plan(std::min(C, n * unit)) <= budget; };
  if (!fits(1))
    throw Error(where, "working set does not fit LX: " + row_msg + ", and a chunk of " +
                           std::to_string(std::min(C, unit)) + " columns in " + std::to_string(P) +
                           " passes needs " +
                           std::to_string(nworkers * 2 * plan(std::min(C, unit))) + " bytes, " +
                           std::to_string(budget) + " usable");
  int64_t lo = 1, hi = ceil_div(C, unit);
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  const int64_t cw = std::min(C, lo * unit), nch = ceil_div(C, cw);
  const int64_t arena_bytes = plan(cw);
  int64_t arena_base[2][2] = {{0, 0}, {0, 0}};
  for (int w = 0; w < nworkers; ++w)
    for (int b = 0; b < 2; ++b)
      arena_base[w][b] =
          k.lx.alloc("chunk_cl" + std::to_string(w) + "_buf" + std::to_string(b), arena_bytes);

  // --- DRAM scratch for spills: per worker, one whole row of each spilled value
  std::map<int, int64_t> spill_off;
  int64_t spill_row_bytes = 0;
  for (int v : spilled) {
    spill_off[v] = spill_row_bytes;
    spill_row_bytes += round_up(C * es(v), stick);
  }
  const uint64_t scratch = k.dram.scratch_addr();
  nlohmann::json spills = nlohmann::json::array();
  int64_t worker_index = 0;

  // --- emission
  auto tile = [&](int v, int w, const Step& st) {
    const isa::DType dt = val(v).dt;
    switch (cl_of(v)) {
      case Cls::Chunk:
        return Tile{arena_base[w][st.i % 2] + arena_off[static_cast<size_t>(st.q)].at(v), cw, 1,
                    dt};
      case Cls::Row: return Tile{row_base[w][st.rp] + row_off.at(v), 0, 0, dt};
      case Cls::Const: return Tile{hoisted.at(v), 0, 0, dt};
    }
    return Tile{};
  };
  auto outer_offset = [&](size_t a, int64_t outer) {
    int64_t off = 0;
    for (size_t d = s.outer.size(); d-- > 0;) {
      off += (outer % s.outer[d].size) * s.outer[d].coeff[a];
      outer /= s.outer[d].size;
    }
    return off;
  };
  auto c0_of = [&](const Step& st) { return st.j * cw; };
  auto nc_of = [&](const Step& st) { return std::min(cw, C - st.j * cw); };
  auto dram_elem = [&](int acc, const Step& st) {
    const auto a = static_cast<size_t>(acc);
    return p.accesses[a].offset + outer_offset(a, st.u / R) + s.row.coeff[a] * (st.u % R) +
           (along_c(acc) ? s.col.coeff[a] * c0_of(st) : 0);
  };
  auto dma_shape = [&](int64_t nc, int64_t e, int64_t lcs, int64_t dcs) {
    if (nc == 1 || (lcs == 1 && dcs == 1)) return DmaShape{nc * e};
    return DmaShape{e, nc, dcs * e, lcs * e};
  };
  auto mem_op = [&](Emitter& em, const TOp& op, int w, const Step& st) {
    const auto a = static_cast<size_t>(op.access);
    const int v = op.kind == TOp::Load ? op.dst : op.src[0];
    const Tile t = tile(v, w, st);
    const int64_t nc = op.kind == TOp::Load ? (cl_of(v) == Cls::Chunk ? nc_of(st) : 1)
                                            : (along_c(op.access) ? nc_of(st) : 1);
    const DmaShape sh = dma_shape(nc, es(v), t.cs, s.col.coeff[a]);
    const uint64_t dram = k.dram_addr(p.accesses[a].buffer, dram_elem(op.access, st));
    if (op.kind == TOp::Load)
      em.load(dram, t.addr, sh);
    else
      em.store(t.addr, dram, sh);
  };
  auto compute_op = [&](Emitter& em, const TOp& op, int w, const Step& st) {
    const int cl = w;
    const Tile dst = tile(op.dst, w, st);
    const int64_t cols = cl_of(op.dst) == Cls::Chunk ? nc_of(st) : 1;
    auto src = [&](size_t j) { return tile(op.src[j], w, st); };
    if (emit_elementwise(em, cl, op, dst, src, 1, cols)) return;
    switch (op.kind) {
      case TOp::Reduce: em.red(cl, op.fn, dst, src(0), 1, nc_of(st), st.j > 0); break;
      case TOp::Iota: {
        // One element, then doubling along the chunk's columns (as loops.cpp, one row).
        const auto a = static_cast<size_t>(op.access);
        const int64_t cc = s.col.size > 1 ? s.col.coeff[a] : 0;
        const bool tiled = cl_of(op.dst) != Cls::Const;
        const int64_t row_part =
            tiled ? outer_offset(a, st.u / R) + (s.row.size > 1 ? s.row.coeff[a] : 0) * (st.u % R)
                  : 0;
        const int64_t col_part = cl_of(op.dst) == Cls::Chunk ? cc * c0_of(st) : 0;
        emit_iota(em, cl, dst, Tile{iota_scratch[cl], 0, 0, dst.dt},
                  static_cast<double>(p.accesses[a].offset + row_part + col_part), 0, cc, 1, cols);
        break;
      }
      case TOp::Gather:  // refused above
      case TOp::Scatter:
      case TOp::Load:  // mem_op
      case TOp::Store:
      case TOp::Unary:  // emit_elementwise
      case TOp::Binary:
      case TOp::Select:
      case TOp::Convert:
      case TOp::Fill: break;
    }
  };

  int64_t max_steps = 0;
  for (int64_t core = 0; core < cfg.cores; ++core) {
    const auto& ws = workers[static_cast<size_t>(core)];
    if (ws.empty()) continue;
    Emitter em = k.emitter(core);
    const Step none{};
    for (const auto& op : ops)
      if (op.dst >= 0 && cl_of(op.dst) == Cls::Const) {
        if (op.kind == TOp::Load)
          mem_op(em, op, 0, none);
        else
          compute_op(em, op, 0, none);
      }
    std::vector<std::vector<Step>> steps(ws.size());
    std::vector<int64_t> wbase(ws.size());
    for (size_t w = 0; w < ws.size(); ++w) {
      for (int64_t u = ws[w].lo; u < ws[w].hi; ++u)
        for (int q = 0; q < P; ++q)
          for (int64_t j = 0; j < nch; ++j)
            steps[w].push_back(
                Step{u, q, j, static_cast<int64_t>(steps[w].size()), (u - ws[w].lo) % 2});
      max_steps = std::max<int64_t>(max_steps, static_cast<int64_t>(steps[w].size()));
      wbase[w] = static_cast<int64_t>(scratch) + worker_index * spill_row_bytes;
      for (int v : spilled)
        spills.push_back(
            {{"value", value_name(p, v)},
             {"core", core},
             {"corelet", w},
             {"dram_addr", wbase[w] + spill_off[v]},
             {"scratch_offset", worker_index * spill_row_bytes + spill_off[v]},
             {"bytes", round_up(C * es(v), stick)},
             {"stored_in_pass", def_pass(v)},
             {"loaded_in_passes",
              cp.reread.count(v) ? nlohmann::json(cp.reread.at(v)) : nlohmann::json::array()},
             {"cycles_per_element",
              {{"spill", cp.spill_cost.at(v).first}, {"recompute", cp.spill_cost.at(v).second}}},
             {"why", row_msg + "; computed in one pass over the row's " + std::to_string(nch) +
                         " chunks and read again in a later pass (after a reduction over the "
                         "row), where spilling costs less than recomputing it (cycles per "
                         "element at this worker's share of DRAM bandwidth)"}});
      ++worker_index;
    }
    auto spill_addr = [&](size_t w, int v, const Step& st) {
      return static_cast<uint64_t>(wbase[w] + spill_off.at(v) + c0_of(st) * es(v));
    };
    auto load_phase = [&](size_t w, size_t i) {
      if (i >= steps[w].size()) return;
      const Step& st = steps[w][i];
      const int wi = static_cast<int>(w);
      auto& lq = live[static_cast<size_t>(st.q)];
      for (const auto& op : ops) {
        if (op.kind != TOp::Load) continue;
        const bool row_load = cl_of(op.dst) == Cls::Row && st.q == 0 && st.j == 0;
        if (row_load || (cl_of(op.dst) == Cls::Chunk && lq.count(op.dst))) mem_op(em, op, wi, st);
      }
    };
    // Reloads of spilled chunks: emitted after the previous step's stores (with one chunk per
    // pass, the chunk was spilled by that very step).
    auto reload_phase = [&](size_t w, size_t i) {
      if (i >= steps[w].size()) return;
      const Step& st = steps[w][i];
      for (int v : spilled)
        if (live[static_cast<size_t>(st.q)].count(v) && def_pass(v) != st.q)
          em.load(spill_addr(w, v, st), tile(v, static_cast<int>(w), st).addr,
                  DmaShape{nc_of(st) * es(v)});
    };
    auto compute_phase = [&](size_t w, size_t i) {
      if (i >= steps[w].size()) return;
      const Step& st = steps[w][i];
      const int wi = static_cast<int>(w);
      const bool row_end = st.j == nch - 1 && st.q == P - 1;
      auto row_op = [&](size_t o) {
        return is_compute(ops[o]) && ops[o].kind != TOp::Reduce && cl_of(ops[o].dst) == Cls::Row;
      };
      if (st.j == 0)
        for (size_t o = 0; o < nops; ++o)
          if (row_op(o) && pass[o] == st.q) compute_op(em, ops[o], wi, st);
      for (size_t o = 0; o < nops; ++o)
        if (ops[o].kind != TOp::Store && (cp.chunk_pass[o] == st.q || cp.extra[o].count(st.q)))
          compute_op(em, ops[o], wi, st);
      if (row_end)
        for (size_t o = 0; o < nops; ++o)
          if (row_op(o) && pass[o] >= P) compute_op(em, ops[o], wi, st);
    };
    auto store_phase = [&](size_t w, size_t i) {
      if (i >= steps[w].size()) return;
      const Step& st = steps[w][i];
      const int wi = static_cast<int>(w);
      for (size_t o = 0; o < nops; ++o)
        if (ops[o].kind == TOp::Store && spass[o] == st.q) mem_op(em, ops[o], wi, st);
      for (int v : spilled)
        if (def_pass(v) == st.q)
          em.store(tile(v, wi, st).addr, spill_addr(w, v, st), DmaShape{nc_of(st) * es(v)});
      if (st.j == nch - 1 && st.q == P - 1)
        for (size_t o = 0; o < nops; ++o)
          if (ops[o].kind == TOp::Store && spass[o] < 0) mem_op(em, ops[o], wi, st);
    };
    size_t n_iter = 0;
    for (const auto& t : steps) n_iter = std::max(n_iter, t.size());
    for (size_t w = 0; w < ws.size(); ++w) load_phase(w, 0), reload_phase(w, 0);
    for (size_t i = 0; i < n_iter; ++i) {
      for (size_t w = 0; w < ws.size(); ++w) load_phase(w, i + 1);
      for (size_t w = 0; w < ws.size(); ++w) compute_phase(w, i);
      for (size_t w = 0; w < ws.size(); ++w) store_phase(w, i);
      for (size_t w = 0; w < ws.size(); ++w) reload_phase(w, i + 1);
    }
  }

  k.report["unit"] = "sfp";
  k.report["split"] = {{"cores_used", cores_used},
                       {"rows", U},
                       {"cols", C},
                       {"outer_loops", s.outer.size()},
                       {"rows_per_corelet", rows_w},
                       {"tiles_per_corelet", max_steps},
                       {"column_chunks", nch},
                       {"passes", P}};
  k.report["tiles"] = {{"rows", 1}, {"cols", cw}, {"arena_bytes", arena_bytes}};
  k.report["ops"] = static_cast<int64_t>(nops);
  k.report["spills"] = spills;
  k.report["spill_scratch_bytes"] = worker_index * spill_row_bytes;
}

}  // namespace spyre::compiler
