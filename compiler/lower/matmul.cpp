// extern_kernels.mm / addmm / bmm on the PT arrays (split, tiles and multicast: divide.h).
//
// Each core owns one block (batch, M, N, K ranges; divide.h). Inside a block the output is cut
// into tm x tn tiles (fp32 accumulator) and K into tk steps; A and B tiles go to ping-pong LX
// slots, so the load of the next step overlaps the matmul of this one. With more than one
// output tile per core the accumulator and output tile alternate too. The tile's rows are split
// between the corelets (pt0/sfp0 the first half). Ordering between a core's queues comes from
// the LX ranges each instruction touches (stream.h). This file checks the operands, picks the
// split (divide.h) and the LX plan and writes the report; matmul_walk.cpp orders each core's
// steps, matmul_emit.cpp emits them (multicast and K-reduction protocol there) and
// matmul_output.cpp the bias, epilogue and store.
#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "matmul_emit.h"
#include "matmul_walk.h"
#include "spyre/compiler/cost.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/epilogue.h"
#include "spyre/compiler/kernel.h"
#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

double kwarg(const ir::Node& n, const char* key, double def) {
  if (!n.kwargs.is_object() || !n.kwargs.contains(key)) return def;
  const auto& v = n.kwargs.at(key);
  return v.is_number() ? v.get<double>() : def;
}

}  // namespace

MatmulOperand matmul_operand(const ir::TensorView& v, const std::string& buffer, bool batched) {
  MatmulOperand m;
  m.buffer = buffer;
  m.dt = v.dtype;
  m.off = v.offset;
  const size_t d = v.size.size();
  if (batched && d == 3) {
    m.batch = v.size[0];
    m.sb = v.stride[0];
  }
  if (d >= 2) {
    m.rows = v.size[d - 2];
    m.cols = v.size[d - 1];
    m.s0 = v.size[d - 2] == 1 ? 0 : v.stride[d - 2];
    m.s1 = v.size[d - 1] == 1 ? 0 : v.stride[d - 1];
  } else if (d == 1) {
    m.rows = 1;
    m.cols = v.size[0];
    m.s1 = v.size[0] == 1 ? 0 : v.stride[0];
  } else {
    m.rows = m.cols = 1;
  }
  return m;
}

namespace {
// The LX plan, every core's instructions and the report of `grid` (the lowering after the
// split is chosen).
void emit_matmul(Kernel& k, MatmulPlan& p, const MatmulGrid& grid, const MatmulShape& shape,
                 const MatmulLxFn& lx_bytes, bool trans_b, const Epilogue* ep);
}  // namespace

void lower_matmul(Kernel& k) {
  const ir::Node& n = k.node;
  const arch::ArchConfig& cfg = k.cfg;
  const bool is_bmm = n.kernel == "extern_kernels.bmm";
  const bool is_addmm = n.kernel == "extern_kernels.addmm";
  const size_t want = is_addmm ? 3 : 2;
  if (n.inputs.size() != want)
    k.unsupported(n.kernel + " with " + std::to_string(n.inputs.size()) + " tensor inputs");
  if (n.outputs.size() != 1)
    k.unsupported("matmul with " + std::to_string(n.outputs.size()) + " outputs");
  const size_t ia = is_addmm ? 1 : 0;
  MatmulPlan p;
  p.is_addmm = is_addmm;
  p.A = matmul_operand(n.inputs[ia], n.inputs[ia].buffer, is_bmm);
  p.B = matmul_operand(n.inputs[ia + 1], n.inputs[ia + 1].buffer, is_bmm);
  p.O = matmul_operand(n.layout, n.outputs[0], is_bmm);
  const MatmulOperand &A = p.A, &B = p.B, &O = p.O;
  const int64_t M = A.rows, K = A.cols, N = B.cols, Bt = A.batch;
  if (B.rows != K || O.rows != M || O.cols != N || B.batch != Bt)
    k.unsupported("inconsistent matmul shapes");
  if (A.dt != B.dt) k.unsupported("matmul operands of different dtypes");
  if (A.s1 != 1 && K > 1)
    k.unsupported("A operand with column stride " + std::to_string(A.s1) +
                  " (transposed A is not supported yet)");
  const bool trans_b = !(B.s1 == 1 || N == 1) && (B.s0 == 1 || K == 1);
  if (!(B.s1 == 1 || N == 1) && !trans_b)
    k.unsupported("B operand with strides (" + std::to_string(B.s0) + ", " + std::to_string(B.s1) +
                  ")");
  if (O.s1 != 1 && N > 1) k.unsupported("output with column stride " + std::to_string(O.s1));
  p.trans_b = trans_b;
  p.alpha = kwarg(n, "alpha", 1.0), p.beta = kwarg(n, "beta", 1.0);
  MatmulOperand& bias = p.bias;
  if (is_addmm) {
    bias = matmul_operand(n.inputs[0], n.inputs[0].buffer, false);
    if (bias.cols != N && bias.cols != 1)
      k.unsupported("bias of shape not broadcastable to the output");
    if (bias.s1 != 1 && bias.s1 != 0)
      k.unsupported("bias with column stride " + std::to_string(bias.s1));
  }
  const int64_t esA = isa::dtype_size_bytes(A.dt), esO = isa::dtype_size_bytes(O.dt);
  const int64_t esBias = is_addmm ? isa::dtype_size_bytes(bias.dt) : 0;
  p.esA = esA, p.esO = esO, p.esBias = esBias;
  const bool bias_rows = is_addmm && bias.s0 != 0 && bias.rows > 1;  // bias varies per row
  p.bias_rows = bias_rows;
  p.bias_scalar = is_addmm && bias.s1 == 0;

  // --- fused epilogue (fuse.h): pointwise ops on each output tile
  std::optional<Epilogue> ep;
  if (k.epilogue) {
    if (is_bmm) k.unsupported("a fused epilogue on bmm is not supported yet");
    if (O.off != 0 || (O.s0 != N && M > 1))
      k.unsupported("a fused epilogue needs a contiguous output");
    ep =
        plan_epilogue(k.g, *k.epilogue, n.outputs[0], M, N, cfg, k.g.file + ": " + ir::describe(n));
    p.ep = &*ep;
  }

  // --- work division and tiles (divide.h): the cost model picks the split and the tiles.
  MatmulShape shape{Bt, M, N, K, esA, esA, esO};
  shape.a_contiguous = A.s0 == K;
  shape.b_transposed = trans_b;
  shape.b_contiguous = trans_b ? B.s1 == K : B.s0 == N;
  shape.a_row_bytes = A.s0 * esA;
  shape.b_row_bytes = (trans_b ? B.s1 : B.s0) * esA;
  shape.out_row_bytes = O.s0 * esO;
  shape.epilogue_ops = (is_addmm ? 2 : 0) + (p.alpha != 1.0 ? 1 : 0) +
                       (ep ? static_cast<int64_t>(ep->p.ops.size()) : 0);
  const bool out_f32 = O.dt == isa::DType::F32;
  p.out_f32 = out_f32;
  auto lx_bytes = [&](int64_t tm, int64_t tn, int64_t tk, int cs, int64_t na, int64_t nb) {
    int64_t ws = na * round_up(tm * tk * esA, 128) + nb * round_up(tk * tn * esA, 128) +
                 cs * round_up(tm * tn * 4, 128);
    if (!out_f32) ws += cs * round_up(tm * tn * esO, 128);
    if (is_addmm) {
      const int64_t brows = bias_rows ? tm : 1;
      ws += cs * round_up(brows * tn * esBias, 128) + 2 * cs * round_up(brows * tn * 4, 128) + 256;
    }
    if (ep)
      ws += cs * ep->slots * round_up((tm + 2) * tn * 4, 128) +
            static_cast<int64_t>(ep->p.vals.size()) * 128;
    return ws + 256;  // alpha, beta
  };
  // What lx_bytes depends on besides its arguments (the search's memo key, divide.h).
  const std::vector<int64_t> lx_key = {out_f32,
                                       esO,
                                       is_addmm,
                                       bias_rows,
                                       esBias,
                                       ep ? ep->slots : -1,
                                       ep ? static_cast<int64_t>(ep->p.vals.size()) : -1};
  if (k.grid) {  // chosen with the LX plan: its output stays in LX as this split divides it
    const MatmulGrid planned = *k.grid;
    emit_matmul(k, p, planned, shape, lx_bytes, trans_b, ep ? &*ep : nullptr);
    k.report["split"]["planned"] = true;
    return;
  }
  // Work division chosen with the LX plan (Kernel::rows_plan): the split that gives every core
  // its producer's rows of A, whole (no N or K split); it reads them from the producer's slot.
  MatmulSplit forced = k.ctx.matmul_split;
  if ((!k.rows_plan.empty() || k.whole_rows) && forced.forced())  // the user's split stands
    throw Error("compiler.matmul_split",
                ir::describe(n) + ": the split is forced, not chosen with the LX plan");
  if (k.whole_rows) forced.whole_rows = true;
  if (!k.rows_plan.empty()) {
    const int64_t r0 = k.rows_plan[0].second - k.rows_plan[0].first;
    // M blocks come in whole PT tiles of both corelets (divide.h): a producer's 4 rows per
    // core are no block, and nothing is searched for them.
    const int64_t tile_rows = M >= cfg.pt_rows * cfg.corelets ? cfg.pt_rows * cfg.corelets : 1;
    if (r0 <= 0 || (r0 > M && r0 % M != 0) || (r0 < M && r0 % tile_rows != 0))
      throw Error(k.g.file + ": " + ir::describe(n),
                  "the LX plan's rows split no matmul block (an internal error)");
    forced = MatmulSplit{};
    forced.parts = r0 < M ? std::array<int64_t, 4>{Bt, ceil_div(M, r0), 1, 1}
                          : std::array<int64_t, 4>{ceil_div(Bt, r0 / M), 1, 1, 1};
  }
  nlohmann::json alternatives;
  std::vector<MatmulGrid> runners_up;
  const MatmulGrid searched = [&] {
    try {
      return choose_matmul_grid(shape, cfg, k.lx_budget(), lx_bytes, forced, &k.ctx.grid_memo,
                                &alternatives, &lx_key, k.ctx.opts.cost, &runners_up);
    } catch (const Error& e) {  // a forced tiling that fits nowhere: say which node
      if (e.where() != "compiler.matmul_tiles") throw;
      const std::string what = e.what();
      throw Error(e.where(),
                  k.g.file + ": " + ir::describe(n) + ": " + what.substr(e.where().size() + 2));
    }
  }();
  if (searched.forced && searched.blocks() > cfg.cores)
    throw Error("compiler.matmul_split",
                ir::describe(n) + ": split b=" + std::to_string(searched.gb) +
                    " m=" + std::to_string(searched.gm) + " n=" + std::to_string(searched.gn) +
                    " k=" + std::to_string(searched.gk) + " needs " +
                    std::to_string(searched.blocks()) + " cores, the chip has " +
                    std::to_string(cfg.cores));

  // The search ranks splits by its closed form; its best few are lowered and the kernel
  // prediction (cost.h, the timeline of their instruction streams) picks among them. Ties keep
  // the search's order.
  const MatmulPlan plan = p;
  auto emit = [&](Kernel& t, const MatmulGrid& grid) {
    MatmulPlan q = plan;
    emit_matmul(t, q, grid, shape, lx_bytes, trans_b, ep ? &*ep : nullptr);
  };
  MatmulGrid grid = searched;
  nlohmann::json verified = nlohmann::json::array();
  std::string pick_key;
  if (!runners_up.empty()) {
    nlohmann::json key = {n.name, k.epilogue ? k.epilogue->name : "", k.store_output, k.lx_top,
                          k.lx_budget()};
    for (const auto& [name, slot] : k.resident)
      key.push_back({name, slot.lx, slot.write, slot.store_dram});
    key.push_back(k.rows_plan);
    key.push_back(k.whole_rows);
    pick_key = key.dump();
  }
  bool picked = false;
  {
    std::lock_guard<std::mutex> lock(k.ctx.memo_mutex);  // context.h
    if (auto it = k.ctx.matmul_pick.find(pick_key);
        !pick_key.empty() && it != k.ctx.matmul_pick.end()) {
      grid = it->second.first;
      verified = it->second.second;
      picked = true;
    }
  }
  if (!picked && !runners_up.empty()) {
    std::vector<MatmulGrid> cands = {searched};
    cands.insert(cands.end(), runners_up.begin(), runners_up.end());
    int64_t best = -1;
    for (const MatmulGrid& c : cands) {
      std::vector<CoreStream> scratch(k.cores.size());
      Kernel t{k.ctx, k.g, k.node, cfg, k.dram, k.id, scratch, k.new_arena()};
      t.epilogue = k.epilogue;
      t.store_output = k.store_output;
      t.resident = k.resident;
      t.lx_top = k.lx_top;
      emit(t, c);
      std::vector<std::vector<isa::Instr>> slices;
      for (auto& st : scratch) {
        st.barrier(k.id);
        slices.push_back(st.kernel_instrs(k.id));
      }
      const int64_t cycles = predict_kernel(k.ctx, slices, cfg).cycles;
      nlohmann::json v = c.to_json();
      v["tiles"] = {{"tm", c.tm}, {"tn", c.tn}, {"tk", c.tk}};
      v["kernel_predicted_cycles"] = cycles;
      verified.push_back(v);
      if (best < 0 || cycles < best) best = cycles, grid = c;
    }
    std::lock_guard<std::mutex> lock(k.ctx.memo_mutex);
    k.ctx.matmul_pick.emplace(pick_key, std::make_pair(grid, verified));
  }
  if (!k.rows_plan.empty()) grid.forced = false;  // chosen with the plan, not by the user
  emit(k, grid);
  if ((!k.rows_plan.empty() && (!k.division || k.division->core_rows != k.rows_plan)) ||
      (k.whole_rows && !k.division))
    throw Error(k.g.file + ": " + ir::describe(n),
                "no split gives every core the rows the LX plan asks for");
  k.report["split"]["alternatives"] = alternatives;
  if (!verified.empty()) k.report["split"]["kernel_predictions"] = verified;
}

namespace {

void emit_matmul(Kernel& k, MatmulPlan& p, const MatmulGrid& grid, const MatmulShape& shape,
                 const MatmulLxFn& lx_bytes, bool trans_b, const Epilogue* ep) {
  const arch::ArchConfig& cfg = k.cfg;
  const ir::Node& n = k.node;
  const bool is_addmm = p.is_addmm;
  const bool out_f32 = p.out_f32;
  const int64_t esA = p.esA, esO = p.esO, esBias = p.esBias;
  const bool bias_rows = p.bias_rows;
  const int64_t Bt = shape.batch, M = shape.m, N = shape.n, K = shape.k;
  p.ep = ep;
  p.grid = grid;
  const int64_t tm = grid.tm, tn = grid.tn, tk = grid.tk;
  const int64_t ctiles_per_core = grid.bb * ceil_div(grid.mb, tm) * ceil_div(grid.nb, tn);
  // Accumulator / output slots: ping-pong, or one per lead tile and one for the next tile.
  const int cs = grid.lead > 1 ? static_cast<int>(grid.lead) + 1 : (ctiles_per_core > 1 ? 2 : 1);
  p.cs = cs;
  // A panel keeps one slot per K step of the block (divide.h); otherwise two (ping-pong).
  p.nbuf = grid.bufs;
  const int64_t a_slots = grid.a_panel ? ceil_div(grid.kb, tk) : p.nbuf;
  const int64_t b_slots = grid.b_panel ? ceil_div(grid.kb, tk) : p.nbuf;
  const int64_t ws_bytes = lx_bytes(tm, tn, tk, cs, a_slots, b_slots);
  if (ws_bytes > k.lx_budget())
    throw Error(k.g.file + ": " + ir::describe(n),
                "working set does not fit LX: " + std::to_string(ws_bytes) + " bytes for " +
                    std::to_string(k.lx_budget()) + " usable");

  // --- LX plan (the same on every core)
  p.C_slot.resize(static_cast<size_t>(cs));
  p.O_slot.resize(static_cast<size_t>(cs));
  p.bias16.resize(static_cast<size_t>(cs));
  p.bias32.assign(static_cast<size_t>(cs), {0, 0});
  for (int64_t s = 0; s < std::max(a_slots, b_slots); ++s) {
    if (s < a_slots) p.A_slot.push_back(k.lx.alloc("A" + std::to_string(s), tm * tk * esA));
    if (s < b_slots) p.B_slot.push_back(k.lx.alloc("B" + std::to_string(s), tk * tn * esA));
  }
  for (int s = 0; s < cs; ++s) {
    const auto su = static_cast<size_t>(s);
    p.C_slot[su] = k.lx.alloc("acc" + std::to_string(s), tm * tn * 4);
    if (!out_f32) p.O_slot[su] = k.lx.alloc("out" + std::to_string(s), tm * tn * esO);
    if (is_addmm) {
      const int64_t brows = bias_rows ? tm : 1;
      p.bias16[su] = k.lx.alloc("bias" + std::to_string(s), brows * tn * esBias);
      for (int cl = 0; cl < 2; ++cl)
        p.bias32[su][static_cast<size_t>(cl)] = k.lx.alloc(
            "bias_f32_" + std::to_string(s) + "_cl" + std::to_string(cl), brows * tn * 4);
    }
  }
  if (ep) {
    for (int s = 0; s < ep->slots; ++s) {
      p.ep_slot.emplace_back(static_cast<size_t>(cs), 0);
      for (int par = 0; par < cs; ++par)
        p.ep_slot.back()[static_cast<size_t>(par)] =
            k.lx.alloc("epi" + std::to_string(s) + "_" + std::to_string(par), (tm + 2) * tn * 4);
    }
    for (size_t v = 0; v < ep->p.vals.size(); ++v)
      p.ep_const.push_back(ep->is_const[v] ? k.lx.alloc("epi_const_v" + std::to_string(v), 4) : -1);
  }
  if (p.alpha != 1.0) p.alpha_at = k.lx.alloc("alpha", 4);
  if (is_addmm && p.beta != 1.0) p.beta_at = k.lx.alloc("beta", 4);

  // --- per core: its block, its steps (matmul_walk.h)
  const std::vector<MatmulCoreWork> work = matmul_walk(grid, Bt, M, N, K);
  k.grid = grid;

  // --- rows over the cores (LoopDivision, kernel.h) when every core holds whole rows of A and of
  // the output (no N or K split; several batches only whole): a loop kernel dividing its rows
  // alike can hand A over in LX, or read the output from LX when it is stored contiguously and
  // without an epilogue (lx_residency.h).
  if (grid.gn == 1 && grid.gk == 1 && (grid.bb == 1 || grid.mb == M)) {
    LoopDivision d;
    d.rows = Bt * M;
    d.core_rows.assign(static_cast<size_t>(cfg.cores), {0, 0});
    for (int64_t c = 0; c < grid.cores_used; ++c) {
      const MatmulCoreWork& w = work[static_cast<size_t>(c)];
      const int64_t lo = w.b0 * M + w.m0, hi = (w.b1 - 1) * M + w.m1;
      if (hi > lo) d.core_rows[static_cast<size_t>(c)] = {lo, hi};
    }
    // An operand or the output as rows of `cols` elements; `rows_major`: stored row after row.
    auto access = [&](const MatmulOperand& m, bool store, int64_t cols, bool rows_major) {
      LoopDivision::BufferAccess a;
      a.storage = k.g.storage_of(m.buffer).name;
      a.store = store;
      a.elem = storage_offset(k.g, m.buffer) + m.off;
      a.rc = d.rows > 1 ? cols : 0;
      a.cc = cols > 1 ? 1 : 0;
      a.r = d.rows > 1;
      a.c = cols > 1;
      a.dt = m.dt;
      a.cols = cols;
      a.placeable = rows_major && (cols == 1 || m.s1 == 1) && (M == 1 || m.s0 == cols) &&
                    (Bt == 1 || m.sb == M * cols);
      d.accesses.push_back(a);
    };
    access(p.A, false, K, !grid.mcast_a);
    access(p.B, false, N, false);  // B and the bias are read whole by every core
    if (is_addmm) access(p.bias, false, N, false);
    access(p.O, true, N, !ep && k.store_output);
    // A fused epilogue's loads and stores go through DRAM: no buffer they touch can be one the
    // plan hands over in LX.
    if (ep)
      for (const auto& op : ep->p.ops)
        if (op.kind == TOp::Load || op.kind == TOp::Store) {
          LoopDivision::BufferAccess a;
          a.storage = k.g.storage_of(ep->p.accesses[static_cast<size_t>(op.access)].buffer).name;
          a.store = op.kind == TOp::Store;
          d.accesses.push_back(a);
        }
    k.division = std::move(d);
  }
  for (const auto& [name, slot] : k.resident) {
    bool fits = k.division.has_value() && !slot.load;
    for (size_t i = 0; fits && i < k.division->accesses.size(); ++i) {
      const auto& x = k.division->accesses[i];
      fits = x.storage != name || (x.store == slot.write && x.placeable);
    }
    if (!fits)
      throw Error(k.g.file + ": " + ir::describe(n),
                  "planned LX residency of " + name +
                      " does not fit this matmul's split (an internal error)");
    if (slot.write)
      p.out_lx = slot.lx, p.out_dram = slot.store_dram;
    else
      p.a_lx = slot.lx;
  }

  // --- per core: its instructions (matmul_emit.h)
  for (int64_t core = 0; core < grid.cores_used; ++core)
    MatmulCoreEmitter(k, p, work[static_cast<size_t>(core)], core).run();

  // --- report: the split, the tiles, the multicast groups and K chains, the prediction
  nlohmann::json split = grid.to_json();
  auto groups_json = [&](bool a) {
    nlohmann::json gs = nlohmann::json::array();
    for (const auto& w : work) {
      if (a ? w.in != 0 : w.im != 0) continue;
      gs.push_back(a ? matmul_a_group(grid, w) : matmul_b_group(grid, w));
    }
    return gs;
  };
  split["multicast"] = {
      {"a",
       {{"enabled", grid.mcast_a},
        {"groups", grid.mcast_a ? groups_json(true) : nlohmann::json::array()}}},
      {"b",
       {{"enabled", grid.mcast_b},
        {"groups", grid.mcast_b ? groups_json(false) : nlohmann::json::array()}}}};
  nlohmann::json chains = nlohmann::json::array();
  if (grid.gk > 1)
    for (int64_t c = 0; c < grid.cores_used; c += grid.gk) {
      nlohmann::json ch = nlohmann::json::array();
      for (int64_t j = 0; j < grid.gk; ++j) ch.push_back(c + j);
      chains.push_back(ch);
    }
  split["k_reduce"] = {{"kind", grid.gk > 1 ? "ring.red chain" : "none"}, {"chains", chains}};
  split["roofline_cycles"] = matmul_roofline_cycles(shape, cfg);
  k.report["split"] = split;
  k.report["tiles"] = {{"tm", tm},           {"tn", tn},        {"tk", tk},
                       {"trans_b", trans_b}, {"acc_slots", cs}, {"a_slots", a_slots},
                       {"b_slots", b_slots}};
  k.report["unit"] = "pt";
  k.report["shape"] = {{"batch", Bt}, {"m", M}, {"n", N}, {"k", K}};
  if (!k.resident.empty()) {
    nlohmann::json res = nlohmann::json::array();
    for (const auto& [name, slot] : k.resident)
      res.push_back({{"buffer", name},
                     {"lx", slot.lx},
                     {"role", slot.write ? "writes" : "reads"},
                     {"dram", slot.write && slot.store_dram}});
    k.report["lx_resident"] = res;
  }
  if (ep)
    k.report["epilogue"] = {{"nodes", k.epilogue->name},
                            {"ops", ep->p.ops.size()},
                            {"lx_slots", ep->slots},
                            {"output_stored", k.store_output}};
}

}  // namespace

}  // namespace spyre::compiler
