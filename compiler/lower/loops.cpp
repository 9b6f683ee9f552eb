// Pointwise and reduction nodes on the SFP (see tile_program.h for the tile program).
//
// Rows are split evenly across cores, then between the two corelets of a core (each corelet a
// "worker" with its own LX tiles). A worker walks its rows in tiles of `tr` rows; each tile's
// values live in one of two arenas (ping-pong), so the loads of tile i+1 overlap the compute of
// tile i and its stores. Inside an arena values share space by liveness (first fit). Values
// that do not depend on the rows (broadcast operands, constants) are loaded or computed once
// per core, on corelet 0, before the tiles.
#include <algorithm>
#include <map>
#include <set>

#include "loops_columns.h"
#include "sfp_emit.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/kernel.h"
#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

constexpr int kArenas = 2;  // per corelet: ping-pong (3 and 4 measured no better)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// DMA shape moving an nr x nc block between LX (strides lrs, lcs) and DRAM (drs, dcs), all
// strides in elements of `es` bytes; contiguous runs become single rows.
DmaShape dma_shape(int64_t nr, int64_t nc, int64_t es, int64_t lrs, int64_t lcs, int64_t drs,
                   int64_t dcs) {
  if (nr == 1) lrs = drs = 0;
  if (nc == 1) lcs = dcs = 0;
  if (nc == 1 || (lcs == 1 && dcs == 1)) {
    if (nr == 1 || (lrs == nc && drs == nc)) return DmaShape{nr * nc * es};
    return DmaShape{nc * es, nr, drs * es, lrs * es};
  }
  if (nr == 1 || (lrs == 1 && drs == 1)) return DmaShape{nr * es, nc, dcs * es, lcs * es};
  return DmaShape{es, nc, dcs * es, lcs * es, nr, drs * es, lrs * es};
}

struct Range {
  int64_t lo, hi;
};

struct TileWork {
  int64_t outer;  // flat index over the outer dims
  int64_t r0, nr;
  int64_t c0 = 0, nc = -1;  // the tile's columns [c0, c0 + nc); nc < 0: all of them
};

// First-fit placement of the tiled values of one arena for a given tile height.
struct ArenaPlan {
  std::map<int, int64_t> offset;  // value -> byte offset in the arena
  int64_t bytes = 0;
};

}  // namespace

void lower_loops(Kernel& k) {
  const std::string where = k.g.file + ": " + ir::describe(k.node);
  TileProgram p = build_tile_program(k.g, k.node, k.cfg, where, k.node.keep_space);
  const IterSpace& s = p.space;
  const arch::ArchConfig& cfg = k.cfg;
  const int64_t C = s.col.size, R = s.row.size, U = s.rows_total();
  const auto& vals = p.vals;
  auto val = [&](int v) -> const TVal& { return vals[static_cast<size_t>(v)]; };
  auto es = [&](int v) { return static_cast<int64_t>(isa::dtype_size_bytes(val(v).dt)); };

  // --- work division: rows over cores (a blocked space, a transpose, in whole blocks of R rows,
  // so no DMA run is cut); a core walks its rows in order in tiles that alternate between its
  // corelets, so each core reads and writes one contiguous stream: two streams per core (a
  // half per corelet) cost DRAM row-buffer locality.
  std::vector<Range> core_rows(static_cast<size_t>(cfg.cores), Range{0, 0});
  int64_t rows_w = 0, cores_used = 0;  // rows_w: the most rows one corelet walks
  int64_t unit = s.blocked ? R : 1;
  // Only one value per row stored (a row reduction's result): each worker takes whole DRAM
  // words of it, so no word is written in pieces by several cores.
  bool row_values_only = !s.blocked && s.outer.empty();
  int64_t word_rows = 1;
  for (const auto& op : p.ops) {
    if (op.kind != TOp::Store) continue;
    const auto a = static_cast<size_t>(op.access);
    const TVal& v = val(op.src[0]);
    row_values_only = row_values_only && v.r && !v.c && s.row.coeff[a] == 1;
    word_rows = std::max(word_rows, cfg.dram_word_bytes / es(op.src[0]));
  }
  // Whole words only while that still gives every core rows: a row reduction over long rows
  // (1 MiB of input, 128 fp16 row values = 2 words) needs every core's DMA, not two.
  if (row_values_only && U % word_rows == 0 && U / word_rows >= cfg.cores) unit = word_rows;
  // Row values only: each core keeps the stored values of all its rows in a region of their own
  // and stores them once, after its last tile. Stored per tile, a few bytes each, they wait
  // behind the DRAM's read stream (writes drain in batches), and the next tile's loads into
  // their arena wait for them.
  std::set<int> batched;
  if (row_values_only)
    for (const auto& op : p.ops)
      if (op.kind == TOp::Store) batched.insert(op.src[0]);
  // Evenly in whole units, or as the LX plan says (Kernel::rows_plan: a producer's rows, so a
  // value it keeps in LX is on the core that reads it) when those cover the rows in order.
  std::vector<std::pair<int64_t, int64_t>> per_core = k.rows_plan;
  int64_t covered = 0;
  for (const auto& [lo, hi] : per_core)
    if (hi > lo) covered = lo == covered && lo % unit == 0 && hi % unit == 0 ? hi : -1;
  const bool planned = per_core.size() == static_cast<size_t>(cfg.cores) && covered == U;
  if (!planned) {
    per_core = split_range(U / unit, cfg.cores);
    for (auto& [lo, hi] : per_core) lo *= unit, hi *= unit;
  }
  if (!k.rows_plan.empty() && !planned && !k.resident.empty())
    throw Error(where, "the LX plan's row division does not fit this kernel (an internal error)");
  int64_t core_rows_max = 0;
  for (size_t c = 0; c < per_core.size(); ++c) {
    auto [lo, hi] = per_core[c];
    if (hi <= lo) continue;
    core_rows[c] = {lo, hi};
    const int64_t parts = std::min<int64_t>(cfg.corelets, (hi - lo) / unit);
    rows_w = std::max(rows_w, ceil_div((hi - lo) / unit, parts) * unit);
    core_rows_max = std::max(core_rows_max, hi - lo);
    ++cores_used;
  }

  // --- values that live outside the arenas, for all of a core's rows at once: row values stored
  // once (batched, above) and buffers kept in LX across kernels (k.resident: the producer
  // computes into the buffer's slot, a reader uses it in place of a load).
  std::map<int, int64_t> placed;  // value -> per-core LX base of its rows
  std::set<int> lx_loads;         // load ops' values taken from LX: no DMA
  std::set<int> no_dram;          // stored values that are not written to DRAM
  std::map<int, int> stores_of;   // value -> how many stores write it
  std::map<int, TOp::Kind> def_kind;
  for (const auto& op : p.ops) {
    if (op.kind == TOp::Store) ++stores_of[op.src[0]];
    if (op.dst >= 0) def_kind[op.dst] = op.kind;
  }
  auto storage_of = [&](const TOp& op) {
    return k.g.storage_of(p.accesses[static_cast<size_t>(op.access)].buffer).name;
  };
  // A space with outer loops walks its rows as flat rows (outer index * R + row; core_rows):
  // an access whose outer strides continue its row stride reads or writes the same elements as
  // one over the flat rows, so a value it moves can be kept in LX like one without outer loops.
  const bool divided = !s.blocked && (s.outer.empty() || R > 1);
  auto flat = [&](size_t a) {
    int64_t want = s.row.coeff[a] * R;
    for (size_t d = s.outer.size(); d-- > 0; want *= s.outer[d].size)
      if (s.outer[d].size > 1 && s.outer[d].coeff[a] != want) return false;
    return divided;
  };
  auto placeable = [&](int v, bool store) {
    const TVal& t = val(v);
    return t.tiled && t.r && !t.transposed &&
           (!store || (def_kind.count(v) && def_kind[v] != TOp::Load && stores_of[v] == 1));
  };
  for (const auto& op : p.ops) {
    if (op.kind != TOp::Load && op.kind != TOp::Store) continue;
    auto it = k.resident.find(storage_of(op));
    if (it == k.resident.end()) continue;
    const bool store = op.kind == TOp::Store;
    const int v = store ? op.src[0] : op.dst;
    if (it->second.write != store || !placeable(v, store) || !flat(static_cast<size_t>(op.access)))
      throw Error(where, "planned LX residency of " + it->first +
                             " does not fit this kernel's tile program (an internal error)");
    placed[v] = it->second.lx;
    if (store)
      no_dram.insert(v);
    else if (!it->second.load)  // a loading first reader DMAs its rows into the slot
      lx_loads.insert(v);
    if (store && it->second.store_dram) no_dram.erase(v);
  }
  std::set<std::string> slots_used;
  for (const auto& op : p.ops)
    if ((op.kind == TOp::Load || op.kind == TOp::Store) && k.resident.count(storage_of(op)))
      slots_used.insert(storage_of(op));
  if (slots_used.size() != k.resident.size())
    throw Error(where,
                "planned LX residency names a buffer this kernel does not access (an "
                "internal error)");

  // Row-vector operands (one value per row, such as b of a + b with b: [R, 1], or a softmax's
  // row maxima read back by a later kernel): each core loads the values of all its rows once,
  // before its first tile, into a region of their own. Loaded per tile they were one DRAM word
  // each, a request that opens a row of the few banks holding the vector between the stream's
  // rows (bcastcol 8192 x 16384: 5x the row conflicts of the same-shaped bcast, 16 % slower).
  // Only while the region is small beside the LX (an eighth of it): the tiles keep the rest.
  std::set<int> batched_loads;
  if (!s.blocked && s.outer.empty())
    for (const auto& op : p.ops) {
      if (op.kind != TOp::Load || placed.count(op.dst)) continue;
      const TVal& t = val(op.dst);
      if (t.tiled && t.r && !t.c && !t.transposed &&
          s.row.coeff[static_cast<size_t>(op.access)] != 0 &&
          round_up(core_rows_max * es(op.dst), cfg.stick_bytes) <= k.lx_budget() / 8)
        batched_loads.insert(op.dst);
    }
  batched.insert(batched_loads.begin(), batched_loads.end());

  // --- liveness positions: loads at 0, compute ops 1.., stores at the end
  std::vector<int64_t> pos(p.ops.size());
  int64_t next = 1;
  const int64_t end_pos = static_cast<int64_t>(p.ops.size()) + 2;
  for (size_t i = 0; i < p.ops.size(); ++i)
    pos[i] = p.ops[i].kind == TOp::Load                                     ? 0
             : p.ops[i].kind == TOp::Store || p.ops[i].kind == TOp::Scatter ? end_pos
                                                                            : next++;
  std::map<int, std::pair<int64_t, int64_t>> live;  // tiled value -> [def, last use]
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const TOp& op = p.ops[i];
    if (op.dst >= 0 && val(op.dst).tiled) live[op.dst] = {pos[i], pos[i]};
    for (int v : op.src)
      if (val(v).tiled) live[v].second = std::max(live[v].second, pos[i]);
  }
  for (int v : batched) live.erase(v);
  for (const auto& [v, base] : placed) live.erase(v);
  int64_t tc = C;  // a tile's columns: all of them, or a stick-column range (below)
  auto value_bytes = [&](int v, int64_t tr) {
    return round_up((val(v).r ? tr : 1) * (val(v).c ? tc : 1) * es(v), cfg.stick_bytes);
  };
  auto plan_arena = [&](int64_t tr) {
    ArenaPlan a;
    std::vector<std::pair<int, std::pair<int64_t, int64_t>>> order(live.begin(), live.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
    struct Block {
      int64_t off, size, end;
    };
    std::vector<Block> active;
    for (const auto& [v, range] : order) {
      const auto first = range.first;  // C++17 lambdas cannot capture a structured binding
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [first](const Block& b) { return b.end < first; }),
                   active.end());
      std::sort(active.begin(), active.end(),
                [](const Block& x, const Block& y) { return x.off < y.off; });
      const int64_t size = value_bytes(v, tr);
      int64_t at = 0;
      for (const auto& b : active) {
        if (b.off >= at + size) break;
        at = std::max(at, b.off + b.size);
      }
      active.push_back({at, size, range.second});
      a.offset[v] = at;
      a.bytes = std::max(a.bytes, at + size);
    }
    return a;
  };

  // --- hoisted values: one region per core
  std::map<int, int64_t> hoisted;
  for (const auto& op : p.ops)
    if (op.dst >= 0 && !val(op.dst).tiled)
      hoisted[op.dst] = k.lx.alloc("const_v" + std::to_string(op.dst), value_bytes(op.dst, 1));

  // --- iota (index_expr) scratch: one stick per corelet for the doubling step's scalar
  bool has_iota = false;
  for (const auto& op : p.ops) has_iota = has_iota || op.kind == TOp::Iota;
  int64_t iota_scratch[2] = {0, 0};
  if (has_iota)
    for (int w = 0; w < 2; ++w)
      iota_scratch[w] = k.lx.alloc("iota_scalar_cl" + std::to_string(w), cfg.stick_bytes);

  // --- tile height: the largest that fits, then at most half a worker's rows (two tiles
  // pipeline; a blocked space keeps whole blocks), never across an outer index.
  const int64_t nworkers = std::min<int64_t>(cfg.corelets, std::max<int64_t>(1, U));
  const int64_t budget = k.lx_budget() - k.lx.used_bytes();
  int64_t batched_bytes = 0;  // per core
  for (int v : batched)
    if (!placed.count(v)) batched_bytes += round_up(core_rows_max * es(v), cfg.stick_bytes);
  auto fits = [&](int64_t tr) {
    return nworkers * kArenas * plan_arena(tr).bytes + batched_bytes <= budget;
  };
  const int64_t cap = std::max<int64_t>(1, std::min(R, rows_w));
  if (!fits(1)) {
    if (!k.resident.empty())
      throw Error(where,
                  "planned LX residency on a kernel walked in column chunks (an internal "
                  "error)");
    // Not even one row fits: walk each row in column chunks (loops_columns.cpp), from an empty
    // arena (the hoisted values above may be whole rows themselves).
    k.lx = k.new_arena();
    lower_loops_columns(k, p, where);
    return;
  }
  int64_t lo = 1, hi = cap;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  // Under the stick layout a tile's rows are the length of each stick column's run, so a
  // corelet's rows go in one tile where they fit (a 1 MiB row sum on 32 cores: runs of 512 B,
  // not 256; 65 -> 105 % of the DRAM bound, tools/bench/membound), and then in a power of two
  // of them, which fills the DMA's in-flight bytes with whole runs.
  const bool stick = cfg.dram_tensor_layout == "stick" && !s.blocked;
  int64_t tr = lo;
  if (rows_w >= 2 && !s.blocked)
    tr = std::min(tr, stick ? rows_w : ceil_div(rows_w, 2));  // 4 or 8 tiles: zoo +4-20 %
  if (stick)
    while (tr & (tr - 1)) tr &= tr - 1;
  // Under the stick layout a tile of whole rows moves each stick column in runs of tr rows x
  // 128 B. A pointwise kernel (no reduction, nothing indexed, transposed or kept in LX across
  // kernels) instead takes a range of stick columns of as many of a core's rows as fit, so each
  // run is that many rows long, as IBM's compiler streams a core's rows of a stick column
  // (torch-spyre user_guide/tensors_and_layouts.md; its cost model's 8-row underfill). The
  // range is the fewest sticks whose run moves a DMA burst (a value's tile of 2 rows: 16
  // sticks), so the tiles stay many, the cores' loads and stores interleave at the DRAM, and a
  // few rows still fill a burst.
  int64_t min_es = 8;
  for (size_t v = 0; v < vals.size(); ++v)
    if (vals[v].c) min_es = std::min(min_es, es(static_cast<int>(v)));
  const int64_t stick_cols = cfg.stick_bytes / min_es;  // columns in a stick of each value
  bool by_columns = stick && !s.cut && s.outer.empty() && C >= 2 * stick_cols && placed.empty() &&
                    k.resident.empty() && !has_iota;
  for (const auto& v : vals) by_columns = by_columns && !v.transposed;
  for (const auto& op : p.ops)
    by_columns =
        by_columns && op.kind != TOp::Reduce && op.kind != TOp::Gather && op.kind != TOp::Scatter;
  if (by_columns) {
    tc = stick_cols;
    int64_t rows = 1, most_rows = std::max<int64_t>(1, core_rows_max);
    while (rows < most_rows) {  // the most rows a one-stick tile holds
      const int64_t mid = (rows + most_rows + 1) / 2;
      if (fits(mid))
        rows = mid;
      else
        most_rows = mid - 1;
    }
    by_columns = fits(rows);
    if (by_columns) {
      tr = rows;
      int64_t sticks =
          std::min(ceil_div(C, stick_cols), ceil_div(cfg.dma_burst_bytes, tr * cfg.stick_bytes));
      for (tc = std::min(C, sticks * stick_cols); sticks > 1 && !fits(tr);)
        tc = std::min(C, --sticks * stick_cols);
    } else {
      tc = C;
    }
  }
  const ArenaPlan arena = plan_arena(tr);
  int64_t arena_base[2][kArenas];
  for (int w = 0; w < 2; ++w)
    for (int b = 0; b < kArenas; ++b)
      arena_base[w][b] =
          w < nworkers
              ? k.lx.alloc("tile_cl" + std::to_string(w) + "_buf" + std::to_string(b), arena.bytes)
              : 0;
  for (int v : batched)
    if (!placed.count(v))
      placed[v] = k.lx.alloc("rows_v" + std::to_string(v),
                             round_up(core_rows_max * es(v), cfg.stick_bytes));

  // --- emission helpers
  int64_t cur_row0 = 0;  // the tile's first row within its core's rows (placed values)
  int64_t cur_c0 = 0;    // the tile's first column (a hoisted row's columns it uses)
  auto tile_of = [&](int v, int w, int64_t i) {
    const TVal& t = val(v);
    if (auto pl = placed.find(v); pl != placed.end()) {
      const int64_t row = t.c ? C : 1;  // elements of one row of the value
      return Tile{pl->second + cur_row0 * row * es(v), t.c ? C : 1, t.c ? 1 : 0, t.dt};
    }
    int64_t addr = t.tiled ? arena_base[w][i % kArenas] + arena.offset.at(v)
                           : hoisted.at(v) + (t.c ? cur_c0 * es(v) : 0);
    const int64_t cols = t.c ? (t.tiled ? tc : C) : 1;
    Tile x{addr, t.r ? cols : 0, t.c ? 1 : 0, t.dt};
    if (t.transposed) x.rs = 1, x.cs = tr;
    return x;
  };
  auto outer_offset = [&](size_t a, int64_t outer) {
    int64_t off = 0;
    for (size_t d = s.outer.size(); d-- > 0;) {
      off += (outer % s.outer[d].size) * s.outer[d].coeff[a];
      outer /= s.outer[d].size;
    }
    return off;
  };
  auto dma_for = [&](const TOp& op, int v, const TileWork& tw, int w, int64_t i) {
    const auto a = static_cast<size_t>(op.access);
    const MemAccess& m = p.accesses[a];
    const bool r = s.row.size > 1 && s.row.coeff[a] != 0, c = s.col.size > 1 && s.col.coeff[a] != 0;
    const int64_t nr = r ? tw.nr : 1, nc = c ? (tw.nc < 0 ? C : tw.nc) : 1;
    const int64_t elem = m.offset + outer_offset(a, tw.outer) + s.row.coeff[a] * tw.r0 +
                         (c ? s.col.coeff[a] * tw.c0 : 0);
    const Tile t = tile_of(v, w, i);
    const DmaShape sh = dma_shape(nr, nc, es(v), t.rs, t.cs, s.row.coeff[a], s.col.coeff[a]);
    return std::make_tuple(k.dram_addr(m.buffer, elem), t.addr, sh);
  };
  int64_t cur_core = 0;  // the core emit_op emits for
  // dma.gather (into `data`) or dma.scatter (from it) of rows x cols elements of op's buffer at
  // the int64 element indices in `idx`: one per element (both tiles row-major, contiguous), or
  // with `whole_rows` one per row (its first element's), each a run of cols contiguous elements
  // (a gather's rows land `run` bytes apart, a scatter's are read at the tile's row stride).
  auto indexed_dma = [&](const TOp& op, const Tile& data, const Tile& idx, int64_t rows,
                         int64_t cols, bool whole_rows) {
    const bool gather = op.kind == TOp::Gather;
    const MemAccess& m = p.accesses[static_cast<size_t>(op.access)];
    const int64_t e = isa::dtype_size_bytes(data.dt);
    if (!gather && (data.cs != 1 || (rows > 1 && !whole_rows && data.rs != cols)))
      throw Error(where,
                  "a scatter's value tile is not row-major and contiguous (an internal error)");
    const int64_t n = whole_rows ? rows : rows * cols, run = whole_rows ? cols * e : e;
    const auto base = static_cast<int64_t>(k.dram_addr(m.buffer, m.offset));
    Access acc;
    acc.lx_read.push_back(tile_span(idx, rows, whole_rows ? 1 : cols));
    (gather ? acc.lx_write : acc.lx_read).push_back(tile_span(data, rows, cols));
    (gather ? acc.dram_read : acc.dram_write).push_back(ByteRange{base, base + m.limit * e});
    k.cores[static_cast<size_t>(cur_core)].emit(
        isa::make_instr(gather ? isa::Opcode::DmaGather : isa::Opcode::DmaScatter,
                        {{"dram", base},
                         {"lx", data.addr},
                         {"idx", idx.addr},
                         {"n", n},
                         {"bytes", run},
                         {"dram_stride", e},
                         {"lx_stride", gather       ? run
                                       : whole_rows ? data.rs * e
                                                    : e},
                         {"limit", whole_rows ? m.limit - cols + 1 : m.limit},
                         {"idt", static_cast<int64_t>(isa::DType::I64)}},
                        k.id),
        std::move(acc));
  };
  auto emit_op = [&](Emitter& em, const TOp& op, const TileWork& tw, int w, int64_t i) {
    const int cl = w;
    if (!placed.empty())
      cur_row0 = tw.outer * R + tw.r0 - core_rows[static_cast<size_t>(cur_core)].lo;
    cur_c0 = tw.c0;
    if (op.kind == TOp::Load) {
      auto [dram, lx, sh] = dma_for(op, op.dst, tw, w, i);
      em.load(dram, lx, sh);
      return;
    }
    if (op.kind == TOp::Store) {
      auto [dram, lx, sh] = dma_for(op, op.src[0], tw, w, i);
      em.store(lx, dram, sh);
      return;
    }
    if (op.kind == TOp::Scatter) {
      const TVal& v = val(op.src[0]);
      indexed_dma(op, tile_of(op.src[0], w, i), tile_of(op.src[1], w, i), v.r ? tw.nr : 1,
                  v.c ? C : 1, !val(op.src[1]).c && v.c);
      return;
    }
    const TVal& d = val(op.dst);
    const int64_t rows = d.r ? tw.nr : 1, cols = d.c ? (tw.nc < 0 ? C : tw.nc) : 1;
    const Tile dst = tile_of(op.dst, w, i);
    auto src = [&](size_t j) { return tile_of(op.src[j], w, i); };
    if (emit_elementwise(em, cl, op, dst, src, rows, cols)) return;
    switch (op.kind) {
      case TOp::Iota: {
        // dst(r, c) = base + rc*r + cc*c by doubling: one element, then each step adds k*stride
        // (an sfp.fill of the corelet's scalar slot) to the first k columns (rows) to write
        // the next k: 1 + 2*ceil(log2 cols) + 2*ceil(log2 rows) instructions.
        const auto a = static_cast<size_t>(op.access);
        const int64_t rc = s.row.size > 1 ? s.row.coeff[a] : 0;
        const int64_t cc = s.col.size > 1 ? s.col.coeff[a] : 0;
        const double base = static_cast<double>(p.accesses[a].offset + outer_offset(a, tw.outer) +
                                                (d.tiled ? rc * tw.r0 : 0));
        emit_iota(em, cl, dst, Tile{iota_scratch[cl], 0, 0, d.dt}, base, rc, cc, rows, cols);
        break;
      }
      case TOp::Gather: indexed_dma(op, dst, src(0), rows, cols, !val(op.src[0]).c && d.c); break;
      case TOp::Reduce: {
        Tile dv = dst;
        dv.rs = d.r ? 1 : 0;
        em.red(cl, op.fn, dv, src(0), rows, val(op.src[0]).c ? C : 1, false);
        break;
      }
      case TOp::Load:  // emitted above
      case TOp::Store:
      case TOp::Scatter:
      case TOp::Unary:  // emit_elementwise
      case TOp::Binary:
      case TOp::Select:
      case TOp::Convert:
      case TOp::Fill: break;
    }
  };

  // --- DRAM bank aliasing: when the cores' slices of an access lie a multiple of the DRAM's
  // bank-interleave span apart (every bank group and bank once per row, the row bits the bank
  // hash folds in included), all cores open rows of the same bank at the same time. Then core c
  // starts its walk at its tile c and wraps around. (64 fp16 rows of 4096 per core, 256 MiB
  // read and written: 88 -> 92 % of the DRAM bound; tools/bench/membound.) A walk by stick
  // columns always does: unrotated, every core is in the same stick column at once, its loads'
  // and stores' runs in step (the fidelity table under the layout 14.7 -> 14.0 % MAPE).
  const int64_t banks = cfg.dram_bank_groups * cfg.dram_banks_per_group;
  const int64_t span =
      cfg.dram_row_bytes * cfg.dram_channels * banks * (cfg.dram_bank_xor ? banks : 1);
  bool rotate = false;
  int64_t slice_rows = 0;  // the most rows a core has
  for (const Range& r : core_rows) slice_rows = std::max(slice_rows, r.hi - r.lo);
  for (const auto& op : p.ops) {
    if (op.kind != TOp::Load && op.kind != TOp::Store) continue;
    const auto a = static_cast<size_t>(op.access);
    const int v = op.kind == TOp::Load ? op.dst : op.src[0];
    const int64_t stride = slice_rows * s.row.coeff[a] * es(v);
    rotate = rotate || (stride > 0 && stride % span == 0 && !s.blocked && s.outer.empty());
  }

  // --- per core
  int64_t max_tiles = 0;
  for (int64_t core = 0; core < cfg.cores; ++core) {
    const Range cr = core_rows[static_cast<size_t>(core)];
    if (cr.hi <= cr.lo) continue;
    Emitter em = k.emitter(core);
    cur_core = core;
    const TileWork none{0, 0, 1};
    for (const auto& op : p.ops)
      if (op.dst >= 0 && !val(op.dst).tiled) emit_op(em, op, none, 0, 0);
    std::vector<TileWork> walk;
    for (int64_t u = cr.lo; u < cr.hi;) {
      const int64_t o = u / R, r = u % R;
      const int64_t nr = std::min({tr, cr.hi - u, R - r});
      if (by_columns)
        for (int64_t c0 = 0; c0 < C; c0 += tc) walk.push_back({o, r, nr, c0, std::min(tc, C - c0)});
      else
        walk.push_back({o, r, nr});
      u += nr;
    }
    const size_t start = rotate || by_columns ? static_cast<size_t>(core) % walk.size() : 0;
    std::vector<std::vector<TileWork>> tiles(static_cast<size_t>(nworkers));
    for (size_t j = 0; j < walk.size(); ++j)
      tiles[j % tiles.size()].push_back(walk[(start + j) % walk.size()]);
    while (tiles.back().empty()) tiles.pop_back();
    for (const auto& t : tiles)
      max_tiles = std::max<int64_t>(max_tiles, static_cast<int64_t>(t.size()));
    const size_t nw = tiles.size();
    auto phase = [&](size_t w, size_t i, int which) {
      if (i >= tiles[w].size()) return;
      for (const auto& op : p.ops) {
        const bool is_store = op.kind == TOp::Store || op.kind == TOp::Scatter;
        const bool tiled = is_store || val(op.dst).tiled;
        if (!tiled ||
            (op.kind == TOp::Store && (batched.count(op.src[0]) || no_dram.count(op.src[0]))) ||
            (op.kind == TOp::Load && (lx_loads.count(op.dst) || batched.count(op.dst))))
          continue;
        const int ph = op.kind == TOp::Load ? 0 : is_store ? 2 : 1;
        if (ph == which) emit_op(em, op, tiles[w][i], static_cast<int>(w), static_cast<int64_t>(i));
      }
    };
    for (const auto& op : p.ops)  // the core's row-vector operands at once
      if (op.kind == TOp::Load && batched_loads.count(op.dst))
        emit_op(em, op, TileWork{0, cr.lo, cr.hi - cr.lo}, 0, 0);
    size_t n_iter = 0;
    for (const auto& t : tiles) n_iter = std::max(n_iter, t.size());
    for (size_t w = 0; w < nw; ++w) phase(w, 0, 0);
    for (size_t i = 0; i < n_iter; ++i) {
      for (size_t w = 0; w < nw; ++w) phase(w, i + 1, 0);
      for (size_t w = 0; w < nw; ++w) phase(w, i, 1);
      for (size_t w = 0; w < nw; ++w) phase(w, i, 2);
    }
    for (const auto& op : p.ops)  // the core's row values at once
      if (op.kind == TOp::Store && batched.count(op.src[0]) && !no_dram.count(op.src[0]))
        emit_op(em, op, TileWork{0, cr.lo, cr.hi - cr.lo}, 0, 0);
  }

  if (divided) {  // what LX residency needs to know (kernel.h)
    LoopDivision d;
    d.rows = U;
    for (const auto& r : core_rows) d.core_rows.emplace_back(r.lo, r.hi);
    for (const auto& op : p.ops) {
      if (op.kind != TOp::Load && op.kind != TOp::Store) continue;
      const auto a = static_cast<size_t>(op.access);
      const bool store = op.kind == TOp::Store;
      const int v = store ? op.src[0] : op.dst;
      LoopDivision::BufferAccess ba;
      ba.storage = storage_of(op);
      ba.store = store;
      ba.elem = storage_offset(k.g, p.accesses[a].buffer) + p.accesses[a].offset;
      ba.rc = s.row.size > 1 ? s.row.coeff[a] : 0;
      ba.cc = s.col.size > 1 ? s.col.coeff[a] : 0;
      ba.r = val(v).r;
      ba.c = val(v).c;
      ba.dt = p.accesses[a].dt;
      ba.placeable = placeable(v, store) && flat(a);
      ba.cols = val(v).c ? C : 1;
      d.accesses.push_back(ba);
    }
    k.division = std::move(d);
  }
  if (!k.resident.empty()) {
    nlohmann::json res = nlohmann::json::array();
    for (const auto& [name, slot] : k.resident)
      res.push_back({{"buffer", name},
                     {"lx", slot.lx},
                     {"role", slot.write  ? "writes"
                              : slot.load ? "loads"
                                          : "reads"},
                     {"dram", slot.write && slot.store_dram}});
    k.report["lx_resident"] = res;
  }
  k.report["unit"] = "sfp";
  k.report["split"] = {{"cores_used", cores_used},
                       {"rows", U},
                       {"cols", C},
                       {"outer_loops", s.outer.size()},
                       {"rows_per_corelet", rows_w},
                       {"tiles_per_corelet", max_tiles}};
  k.report["tiles"] = {{"rows", tr},
                       {"cols", tc},
                       {"arena_bytes", arena.bytes},
                       {"row_values_stored_once", !batched.empty()},
                       {"rotated_walk", rotate || by_columns}};
  k.report["ops"] = static_cast<int64_t>(p.ops.size());
}

}  // namespace spyre::compiler
