// aten.topk, sort, kthvalue, median.dim and median on the SFP (select.h), no sort instruction.
//
// The input is walked as U rows of n elements (every dim but the selected one collapses into
// the rows). Rows are split over cores, then corelets; each corelet walks tiles of `tr` rows:
// load, convert to fp32 (exact for fp16/bf16), then rounds. Round j takes the next element of
// each row in torch's order -- largest: NaN first, then descending; smallest: ascending, NaN
// last; equal values by ascending index -- from the candidates `cand` (not taken yet):
//   largest:  m = rmax(cand ? x : -inf)        (NaN if a NaN is left: rmax propagates it)
//             hit = cand & (isnan(m) ? isnan(x) : x == m)
//   smallest: c = cand & !isnan(x); m = rmin(c ? x : +inf); any = rmax(c)
//             hit = cand & (any ? x == m : isnan(x))
//   idx = argmax(hit ? 1 : 0)                 (the first hit: the lowest index)
//   onehot = iota == idx; value = rmax(onehot ? x : -inf); cand &= !onehot
// The value is the element itself (its sign of zero too), not m. -inf never stands for "taken"
// (the hit mask does), so rows full of -inf or NaN select correctly. Median: rank (n-1)/2 of
// the smallest order (the lower median, as torch), a row with a NaN gives NaN at its first NaN
// (torch). topk: k rounds; sort: n (descending = largest); kthvalue: k, the last one kept.
// Cost: 12-13 SFP ops per round over the tile (median and sort: n^2/2 element-ops per row).
#include "spyre/compiler/select.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "sfp_emit.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/kernel.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

using isa::DType;
using isa::SfpFn;

// A view as rows x n: element (u, j) at storage offset off + u*rs + j*cs.
struct RowWalk {
  int64_t rows = 1, off = 0, rs = 0, cs = 0, n = 1;
};

// Every dim but `dim` (none when dim < 0) collapses into one row dim of uniform stride; false
// when the strides do not allow it.
bool walk_rows(const ir::TensorView& v, int64_t dim, RowWalk& w) {
  w = RowWalk{};
  w.off = v.offset;
  if (dim >= 0) w.n = v.size[static_cast<size_t>(dim)], w.cs = v.stride[static_cast<size_t>(dim)];
  int64_t expect = -1;  // the stride the next outer dim must have
  for (size_t d = v.size.size(); d-- > 0;) {
    if (static_cast<int64_t>(d) == dim || v.size[d] == 1) continue;
    if (expect >= 0 && v.stride[d] != expect) return false;
    if (expect < 0) w.rs = v.stride[d];
    w.rows *= v.size[d];
    expect = v.stride[d] * v.size[d];
  }
  return true;
}

struct Output {
  std::string buffer;
  ir::TensorView view;
  RowWalk walk;
};

// What the node asks for. `last_only`: one output column, the last round's (median, kthvalue).
struct Select {
  std::string op;  // "topk", "sort", "median", "median_all", "kthvalue"
  bool largest = true, last_only = false;
  int64_t k = 1, dim = -1, rounds = 1, out_cols = 1;
  RowWalk in;
  DType dt = DType::F16;
  std::string in_buffer;
  std::optional<Output> values, indices;
};

const nlohmann::json* arg(const ir::Node& n, size_t pos, const char* name) {
  if (n.kwargs.is_object() && n.kwargs.contains(name)) return &n.kwargs[name];
  if (n.constant_args.is_array() && pos < n.constant_args.size()) return &n.constant_args[pos];
  return nullptr;
}

// The ATen overloads lowered here and the name of each.
const std::map<std::string, std::string>& overloads() {
  static const std::map<std::string, std::string> m = {
      {"aten.topk.default", "topk"},         {"aten.sort.default", "sort"},
      {"aten.sort.stable", "sort"},          {"aten.median.dim", "median"},
      {"aten.median.default", "median_all"}, {"aten.kthvalue.default", "kthvalue"}};
  return m;
}

Select parse(const Kernel& k) {
  const ir::Node& n = k.node;
  Select s;
  s.op = overloads().at(n.op_overload);
  if (n.inputs.size() != 1) k.unsupported("expected one tensor input");
  const ir::TensorView& in = n.inputs[0];
  s.dt = in.dtype;
  if (s.dt != DType::F16 && s.dt != DType::BF16 && s.dt != DType::F32)
    k.unsupported("selection over " + std::string(isa::dtype_name(s.dt)) +
                  " is not lowered (f16, bf16, f32 only)");
  auto get_int = [&](size_t pos, const char* name, int64_t def) {
    const nlohmann::json* v = arg(n, pos, name);
    if (!v || v->is_null()) return def;
    if (!v->is_number_integer())
      k.unsupported(std::string("argument '") + name + "': expected int");
    return v->get<int64_t>();
  };
  auto get_bool = [&](size_t pos, const char* name, bool def) {
    const nlohmann::json* v = arg(n, pos, name);
    if (!v || v->is_null()) return def;
    if (!v->is_boolean()) k.unsupported(std::string("argument '") + name + "': expected bool");
    return v->get<bool>();
  };
  // Positions in constant_args (the non-tensor arguments); kwargs by name first.
  // topk(self, k, dim=-1, largest=True, sorted=True): sorted=False is accepted (torch leaves
  // that order unspecified; ours is sorted). sort(self, dim=-1, descending=False);
  // sort.stable(self, *, stable, dim=-1, descending=False): stable or not, ties come by
  // ascending index (the stable order). median.dim(self, dim, keepdim=False), median(self):
  // all elements. kthvalue(self, k, dim=-1, keepdim=False): the k-th smallest, NaN largest.
  const int64_t rank = static_cast<int64_t>(in.size.size());
  const bool stable_overload = n.op_overload == "aten.sort.stable";
  if (s.op == "topk") {
    s.k = get_int(0, "k", -1);
    s.dim = get_int(1, "dim", -1);
    s.largest = get_bool(2, "largest", true);
  } else if (s.op == "sort") {
    s.dim = get_int(stable_overload ? 1 : 0, "dim", -1);
    s.largest = get_bool(stable_overload ? 2 : 1, "descending", false);
  } else if (s.op == "kthvalue") {
    s.k = get_int(0, "k", -1);
    s.dim = get_int(1, "dim", -1);
    s.largest = false;
  } else {
    s.dim = s.op == "median" ? get_int(0, "dim", -1) : -1;
    s.largest = false;
  }
  ir::TensorView v = in;
  if (rank == 0 || s.op == "median_all") {  // one row over every element
    RowWalk all;
    if (!walk_rows(in, -1, all))
      k.unsupported("input layout: its dims do not collapse into one stride");
    v.size = {all.rows}, v.stride = {all.rs}, v.offset = in.offset;
    s.dim = 0;
  }
  if (s.dim < 0) s.dim += static_cast<int64_t>(v.size.size());
  if (s.dim < 0 || s.dim >= static_cast<int64_t>(v.size.size()))
    k.unsupported("dim out of range for a rank-" + std::to_string(rank) + " input");
  if (!walk_rows(v, s.dim, s.in))
    k.unsupported("input layout: the dims other than dim " + std::to_string(s.dim) +
                  " do not collapse into rows of one stride");
  s.in_buffer = in.buffer;
  const int64_t N = s.in.n;
  if (N >= (int64_t{1} << 24))
    k.unsupported("a dim of " + std::to_string(N) + " elements (indices are exact below 2^24)");
  s.last_only = s.op == "median" || s.op == "median_all" || s.op == "kthvalue";
  if (s.op == "sort") s.k = N;
  if (s.op == "median" || s.op == "median_all") {
    if (N == 0) k.unsupported("median of an empty dim");
    s.k = (N - 1) / 2 + 1;  // the lower median: rank (n-1)/2
  }
  if (s.k < (s.op == "kthvalue" ? 1 : 0) || s.k > N)
    k.unsupported("k = " + std::to_string(s.k) + " out of range for a dim of " + std::to_string(N));
  s.rounds = s.k;
  s.out_cols = s.last_only ? 1 : s.k;

  // The tuple's elements: MultiOutput nodes reading this node's (tuple) output.
  const std::string tuple = n.outputs.empty() ? "" : n.outputs[0];
  for (const auto& m : k.g.nodes) {
    if (m.kind != "fallback" || m.kernel != "MultiOutput" || m.inputs.empty() ||
        m.inputs[0].buffer != tuple)
      continue;
    // indices [] : the op returns one tensor (median of all elements), the values.
    const int64_t elem = m.indices.empty() ? 0 : m.indices[0];
    if (m.indices.size() > 1 || elem > 1)
      k.unsupported("MultiOutput " + m.name + ": expected tuple element [0] or [1]");
    Output o{m.outputs.at(0), m.layout, {}};
    // keepdim / topk / sort keep the dim (size out_cols); median, kthvalue may drop it.
    const bool same_rank = o.view.size.size() == v.size.size() && s.op != "median_all";
    const int64_t odim = same_rank ? s.dim : -1;
    const bool dropped =
        s.op == "median_all" ? s.in.rows == 1 : o.view.size.size() + 1 == v.size.size();
    if (!walk_rows(o.view, odim, o.walk) || o.walk.rows != s.in.rows ||
        (same_rank && o.walk.n != s.out_cols) || (!same_rank && (!dropped || !s.last_only)))
      k.unsupported("MultiOutput " + m.name + ": output layout does not match the selection (" +
                    std::to_string(s.in.rows) + " rows of " + std::to_string(s.out_cols) + ")");
    const DType want = elem == 0 ? s.dt : DType::I64;
    if (o.view.dtype != want)
      k.unsupported("MultiOutput " + m.name + ": expected dtype " +
                    std::string(isa::dtype_name(want)));
    (elem == 0 ? s.values : s.indices) = o;
  }
  return s;
}

// DMA shape of rows x cols elements: DRAM strides (elements) drs, dcs; LX rows contiguous.
DmaShape shape(int64_t rows, int64_t cols, int64_t es, int64_t drs, int64_t dcs) {
  return DmaShape{es, cols, dcs * es, es, rows, drs * es, cols * es};
}

}  // namespace

bool select_lowers(const std::string& op_overload) { return overloads().count(op_overload) > 0; }

bool select_rows_collapse(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                          int64_t dim) {
  ir::TensorView v;
  v.size = size, v.stride = stride;
  RowWalk w;
  return walk_rows(v, dim, w);
}

void lower_select(Kernel& k) {
  const Select s = parse(k);
  k.report["unit"] = "sfp";
  const arch::ArchConfig& cfg = k.cfg;
  const int64_t N = s.in.n, U = s.in.rows, K = s.out_cols;
  const int64_t in_es = isa::dtype_size_bytes(s.dt);
  const int64_t stick = cfg.stick_bytes;

  // --- constants, once per core (corelet 0): iota over the columns and scalars.
  const int64_t iota = k.lx.alloc("select.iota", N * 4);
  const int64_t consts = k.lx.alloc("select.consts", 6 * stick);
  auto scalar = [&](int i, DType dt) { return Tile{consts + i * stick, 0, 0, dt}; };
  const Tile ninf = scalar(0, DType::F32), pinf = scalar(1, DType::F32),
             one = scalar(2, DType::F32), zero = scalar(3, DType::F32),
             fals = scalar(4, DType::Bool), tmp = scalar(5, DType::F32);

  // --- per corelet buffers for a tile of tr rows
  // LX bytes per tile row of the 16 buffers below (each also padded to a stick: `fixed`).
  const int64_t row_bytes = N * (in_es + 4 + 4 + 4) + N * 5 + K * (4 + 4 + in_es + 8) + 4 * 4;
  const int64_t fixed = k.lx.used_bytes() + cfg.corelets * 16 * stick;
  const int64_t budget = (cfg.lx_usable_bytes() - fixed) / cfg.corelets;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> workers(static_cast<size_t>(cfg.cores));
  int64_t rows_w = 0, cores_used = 0;
  const auto per_core = split_range(U, cfg.cores);
  for (size_t c = 0; c < per_core.size(); ++c) {
    for (auto [a, b] : split_range(per_core[c].second - per_core[c].first, cfg.corelets)) {
      workers[c].push_back({per_core[c].first + a, per_core[c].first + b});
      rows_w = std::max(rows_w, b - a);
    }
    ++cores_used;
  }
  const int64_t tr = std::min(rows_w, budget / row_bytes);
  if (U == 0 || K == 0) return;  // empty outputs: nothing to compute
  if (tr < 1)
    k.unsupported("one row of " + std::to_string(N) + " elements needs " +
                  std::to_string(row_bytes) + " LX bytes per corelet, " +
                  std::to_string(std::max<int64_t>(budget, 0)) + " available");

  struct Buffers {
    Tile xin, x, t, h, nan, notnan, cand, e, oh, m, flag, fnan, vals, idxs, vout, iout;
  };
  std::vector<Buffers> bufs(static_cast<size_t>(cfg.corelets));
  for (int cl = 0; cl < cfg.corelets; ++cl) {
    const std::string p = "select.cl" + std::to_string(cl) + ".";
    auto mat = [&](const char* name, DType dt, int64_t cols) {
      return Tile{k.lx.alloc(p + name, tr * cols * isa::dtype_size_bytes(dt)), cols, 1, dt};
    };
    Buffers& b = bufs[static_cast<size_t>(cl)];
    b.xin = mat("in", s.dt, N);
    b.x = mat("x", DType::F32, N);
    b.t = mat("t", DType::F32, N);
    b.h = mat("h", DType::F32, N);
    b.nan = mat("nan", DType::Bool, N);
    b.notnan = mat("notnan", DType::Bool, N);
    b.cand = mat("cand", DType::Bool, N);
    b.e = mat("e", DType::Bool, N);
    b.oh = mat("onehot", DType::Bool, N);
    b.m = mat("m", DType::F32, 1);
    b.flag = mat("flag", DType::Bool, 1);
    b.fnan = mat("first_nan", DType::F32, 1);
    b.vals = mat("vals", DType::F32, K);
    b.idxs = mat("idxs", DType::F32, K);
    b.vout = mat("vout", s.dt, K);
    b.iout = mat("iout", DType::I64, K);
  }

  auto bcast = [](const Tile& col) { return Tile{col.addr, col.rs, 0, col.dt}; };  // per row
  const Tile iota_row{iota, 0, 1, DType::F32};
  const double inf = std::numeric_limits<double>::infinity();
  // SFP instructions per tile: convert, NaN masks, candidates; the rounds (the last one
  // keeps its candidates); median's NaN fix-up; one convert per output.
  const int64_t per_round = s.largest ? 12 : 13;
  const int64_t sfp_per_tile = 4 + s.rounds * per_round - (s.rounds > 0 ? 1 : 0) +
                               (s.op == "median" || s.op == "median_all" ? 6 : 0) +
                               (s.values ? 1 : 0) + (s.indices ? 1 : 0);

  for (int64_t core = 0; core < cfg.cores; ++core) {
    const auto& ws = workers[static_cast<size_t>(core)];
    if (ws.empty()) continue;
    Emitter em = k.emitter(core);
    em.fill(0, ninf, 1, 1, -inf);
    em.fill(0, pinf, 1, 1, inf);
    em.fill(0, one, 1, 1, 1.0);
    em.fill(0, zero, 1, 1, 0.0);
    em.fill(0, fals, 1, 1, 0.0);
    emit_iota(em, 0, iota_row, tmp, 0.0, 0, 1, 1, N);
    for (size_t w = 0; w < ws.size(); ++w) {
      const int cl = static_cast<int>(w);
      const Buffers& b = bufs[w];
      for (int64_t r0 = ws[w].first; r0 < ws[w].second; r0 += tr) {
        const int64_t R = std::min(tr, ws[w].second - r0);
        em.load(k.dram_addr(s.in_buffer, s.in.off + r0 * s.in.rs), b.xin.addr,
                shape(R, N, in_es, s.in.rs, s.in.cs));
        em.cvt(cl, b.x, b.xin, R, N);
        em.bin(cl, SfpFn::Ne, b.nan, b.x, b.x, R, N);
        em.un(cl, SfpFn::Not, b.notnan, b.nan, R, N);
        em.fill(cl, b.cand, R, N, 1.0);
        for (int64_t j = 0; j < s.rounds; ++j) {
          const int64_t col = s.last_only ? 0 : j;
          const Tile idx{b.idxs.addr + col * 4, K, 0, DType::F32};
          const Tile val{b.vals.addr + col * 4, K, 0, DType::F32};
          if (s.largest) {
            em.sel(cl, b.t, b.cand, b.x, ninf, R, N);
            em.red(cl, SfpFn::RMax, b.m, b.t, R, N, false);
            em.bin(cl, SfpFn::Eq, b.e, b.x, bcast(b.m), R, N);
            em.bin(cl, SfpFn::Ne, b.flag, b.m, b.m, R, 1);
            em.sel(cl, b.e, bcast(b.flag), b.nan, b.e, R, N);
          } else {
            em.bin(cl, SfpFn::And, b.e, b.cand, b.notnan, R, N);
            em.sel(cl, b.t, b.e, b.x, pinf, R, N);
            em.red(cl, SfpFn::RMin, b.m, b.t, R, N, false);
            em.red(cl, SfpFn::RMax, b.flag, b.e, R, N, false);
            em.bin(cl, SfpFn::Eq, b.e, b.x, bcast(b.m), R, N);
            em.sel(cl, b.e, bcast(b.flag), b.e, b.nan, R, N);
          }
          em.bin(cl, SfpFn::And, b.e, b.e, b.cand, R, N);
          em.sel(cl, b.h, b.e, one, zero, R, N);
          em.red(cl, SfpFn::ArgMax, idx, b.h, R, N, false);
          em.bin(cl, SfpFn::Eq, b.oh, iota_row, idx, R, N);
          em.sel(cl, b.t, b.oh, b.x, ninf, R, N);
          em.red(cl, SfpFn::RMax, val, b.t, R, N, false);
          if (j + 1 < s.rounds) em.sel(cl, b.cand, b.oh, fals, b.cand, R, N);
        }
        if (s.op == "median" || s.op == "median_all") {  // NaN at the first NaN (torch)
          em.red(cl, SfpFn::RMax, b.flag, b.nan, R, N, false);
          em.sel(cl, b.h, b.nan, one, zero, R, N);
          em.red(cl, SfpFn::ArgMax, b.fnan, b.h, R, N, false);
          em.fill(cl, b.m, R, 1, std::numeric_limits<double>::quiet_NaN());
          em.sel(cl, b.vals, b.flag, b.m, b.vals, R, 1);
          em.sel(cl, b.idxs, b.flag, b.fnan, b.idxs, R, 1);
        }
        if (s.values) {
          const RowWalk& o = s.values->walk;
          em.cvt(cl, b.vout, b.vals, R, K);
          em.store(b.vout.addr, k.dram_addr(s.values->buffer, o.off + r0 * o.rs),
                   shape(R, K, in_es, o.rs, o.cs));
        }
        if (s.indices) {
          const RowWalk& o = s.indices->walk;
          em.cvt(cl, b.iout, b.idxs, R, K);
          em.store(b.iout.addr, k.dram_addr(s.indices->buffer, o.off + r0 * o.rs),
                   shape(R, K, 8, o.rs, o.cs));
        }
      }
    }
  }

  k.report["lowering"] =
      s.op + ": " + std::to_string(s.rounds) + " rounds of a masked rmax/rmin and argmax";
  k.report["shape"] = {{"rows", U}, {"n", N}, {"k", K}, {"largest", s.largest}};
  k.report["rounds"] = s.rounds;
  k.report["split"] = {{"cores_used", cores_used}, {"rows_per_corelet", rows_w}};
  k.report["tiles"] = {{"rows", tr}, {"cols", N}};
  k.report["sfp_instructions_per_tile"] = sfp_per_tile;
}

}  // namespace spyre::compiler
