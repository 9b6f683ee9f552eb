// A matmul core's operand streaming, matmuls, multicast handshakes and K-reduction chain
// (matmul_emit.h). The protocol across cores:
// - multicast: tile i of an A (B) group is read with dma.load mcast to the others, token
//   kArrA/kArrB + slot on each: when the other operand is private its rows are cut into parts
//   of at least a DMA burst, part p read by member (i + p) mod size (mcast_part); else member
//   i mod size reads it whole. A receiver waits once per part on its ring queue (that wait
//   stands for the remote write, so its PT queues are ordered after it) and, after its last
//   matmul on the tile, signals the loaders of tile i+nbuf (kFreeA/kFreeB + its position);
//   nbuf (divide.h `bufs`) slots per streamed operand, loads nbuf-1 steps ahead.
// - K split: after its last matmul on an output tile, core ik > 0 signals ik-1 (kRedReady) and
//   waits for its partial sum (kRedArr); core ik < gk-1 then ring.red's its accumulator into
//   ik+1's; the last core of the chain runs the epilogue and stores.
#include <algorithm>

#include "matmul_emit.h"

#include "spyre/arch/unit_timing.h"

namespace spyre::compiler {
namespace {

// Tokens of the cross-core handshakes (the automatic ones use 0..48, stream.h).
constexpr int64_t kArrA = 64, kArrB = 68, kFreeA = 128, kFreeB = 192, kRedArr = 96, kRedReady = 97;
const auto ring_q = static_cast<int64_t>(isa::Queue::Ring);
const auto dma_in_q = static_cast<int64_t>(isa::Queue::DmaIn);

Access lx_range(int64_t lo, int64_t bytes) {
  Access a;
  a.lx_write.push_back(ByteRange{lo, lo + bytes});
  return a;
}

}  // namespace

std::pair<int64_t, int64_t> mcast_part(int64_t rows, int64_t row_bytes, int64_t gs, int64_t idx,
                                       int64_t member, int64_t min_bytes) {
  const int64_t np =
      min_bytes <= 0 ? 1 : std::max<int64_t>(1, std::min({gs, rows, rows * row_bytes / min_bytes}));
  const int64_t p = ((member - idx) % gs + gs) % gs;
  if (p >= np) return {0, 0};
  const int64_t chunk = (rows + np - 1) / np;
  return {std::min(rows, p * chunk), std::min(rows, (p + 1) * chunk)};
}

std::vector<int64_t> matmul_a_group(const MatmulGrid& grid, const MatmulCoreWork& w) {
  std::vector<int64_t> g;
  for (int64_t j = 0; j < grid.gn; ++j) g.push_back(grid.core_of(w.ib, w.im, j, w.ik));
  return g;
}

std::vector<int64_t> matmul_b_group(const MatmulGrid& grid, const MatmulCoreWork& w) {
  std::vector<int64_t> g;
  for (int64_t i = 0; i < grid.gm; ++i) g.push_back(grid.core_of(w.ib, i, w.in, w.ik));
  return g;
}

MatmulCoreEmitter::MatmulCoreEmitter(Kernel& k, const MatmulPlan& p, const MatmulCoreWork& w,
                                     int64_t core)
    : k_(k),
      p_(p),
      w_(w),
      core_(core),
      owner_(w.ik == p.grid.gk - 1),
      ga_(matmul_a_group(p.grid, w)),
      gb_(matmul_b_group(p.grid, w)),
      my_a_(w.in),
      my_b_(w.im),
      // Split multicast tiles into parts only when the other operand is private.
      part_min_(p.grid.mcast_a && p.grid.mcast_b ? 0 : k.cfg.dma_burst_bytes),
      em_(k.emitter(core)) {
  for (const MatmulStep& s : w.steps) {
    if (s.load_a) a_rows_.push_back({s.m1 - s.m0, (s.k1 - s.k0) * p.esA});
    if (s.load_b)
      b_rows_.push_back(p.trans_b ? std::make_pair(s.n1 - s.n0, (s.k1 - s.k0) * p.esA)
                                  : std::make_pair(s.k1 - s.k0, (s.n1 - s.n0) * p.esA));
  }
}

void MatmulCoreEmitter::run() {
  const std::vector<MatmulStep>& steps = w_.steps;
  if (steps.empty()) return;
  emit_constants();
  // Loads run one step ahead (a third slot only adds slack for the multicast handshake). A B
  // tile in pieces (lead group) rides with the loads of the steps before its own: piece q of
  // step j goes out after the loads emitted before compute j - P + q.
  const size_t ahead = 1;
  std::vector<std::vector<std::pair<size_t, int64_t>>> pieces_at(steps.size() + 1);
  auto in_pieces = [&](const MatmulStep& s) {
    return s.b_pieces > 1 && s.load_b && !p_.grid.mcast_b;
  };
  for (size_t j = 0; j < steps.size(); ++j) {
    if (!in_pieces(steps[j])) continue;
    const int64_t P = steps[j].b_pieces;
    for (int64_t q = 0; q < P; ++q) {
      const int64_t at = static_cast<int64_t>(j) - static_cast<int64_t>(ahead) - (P - 1) + q + 1;
      pieces_at[static_cast<size_t>(std::max<int64_t>(at, 0))].push_back({j, q});
    }
  }
  auto loads = [&](size_t j) { emit_loads(steps[j], in_pieces(steps[j]) ? 5 : 7); };
  auto pieces = [&](size_t at) {
    for (const auto& [j, q] : pieces_at[at]) emit_loads(steps[j], 2, q, steps[j].b_pieces);
  };
  for (size_t i = 0; i < std::min(ahead, steps.size()); ++i) loads(i);
  pieces(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + ahead < steps.size()) loads(i + ahead);
    pieces(i + 1);
    emit_compute(steps[i]);
    if (steps[i].last_k) {
      emit_reduce(steps[i]);
      if (owner_) emit_epilogue(steps[i]);
    }
  }
}

uint64_t MatmulCoreEmitter::addr(const MatmulOperand& m, int64_t b, int64_t i, int64_t j) const {
  return k_.dram_addr(m.buffer, m.off + b * m.sb + i * m.s0 + j * m.s1);
}

std::array<std::pair<int64_t, int64_t>, 2> MatmulCoreEmitter::split_rows(int64_t mt) const {
  const int64_t h = arch::pt_corelet_rows(k_.cfg, mt);
  return {std::make_pair(int64_t{0}, h), std::make_pair(h, mt)};
}

void MatmulCoreEmitter::raw_wait(int64_t q, int64_t tok, Access acc) {
  k_.cores[static_cast<size_t>(core_)].emit(
      isa::make_instr(isa::Opcode::Wait, {{"q", q}, {"tok", tok}}, k_.id), std::move(acc));
}

void MatmulCoreEmitter::raw_sig(int64_t q, int64_t tok, int64_t to, Access acc) {
  k_.cores[static_cast<size_t>(core_)].emit(
      isa::make_instr(isa::Opcode::Signal, {{"q", q}, {"tok", tok}, {"core", to}}, k_.id),
      std::move(acc));
}

// A load of one operand tile: local, or (multicast) its rows cut among the group's cores,
// each reading its part and multicasting it (mcast_part).
void MatmulCoreEmitter::load_tile(bool mcast, const std::vector<int64_t>& group, int64_t pos,
                                  int64_t idx, int64_t free_tok, int64_t arr_tok, uint64_t dram,
                                  int64_t lx, DmaShape sh) {
  if (!mcast) {
    em_.load(dram, lx, sh);
    return;
  }
  const auto gs = static_cast<int64_t>(group.size());
  const auto [r0, r1] = mcast_part(sh.rows, sh.bytes, gs, idx, pos, part_min_);
  if (r1 <= r0) return;  // other cores of the group read it
  dram += static_cast<uint64_t>(r0 * sh.dram_stride);
  lx += r0 * sh.lx_stride;
  sh.rows = r1 - r0;
  // Every other core of the group has finished with this slot (its previous tile).
  if (idx >= p_.nbuf)
    for (int64_t q = 0; q < gs; ++q)
      if (q != pos) raw_wait(dma_in_q, free_tok + q, Access{});
  int64_t mask = 0;
  for (int64_t q = 0; q < gs; ++q)
    if (q != pos) mask |= int64_t{1} << group[static_cast<size_t>(q)];
  if (sh.rows > 1 && sh.dram_stride == sh.bytes && sh.lx_stride == sh.bytes)
    sh = DmaShape{sh.bytes * sh.rows};
  Access acc;
  acc.dram_read.push_back(dma_span(static_cast<int64_t>(dram), sh, true));
  acc.lx_write.push_back(dma_span(lx, sh, false));
  k_.cores[static_cast<size_t>(core_)].emit(isa::make_instr(isa::Opcode::DmaLoad,
                                                            {{"dram", static_cast<int64_t>(dram)},
                                                             {"lx", lx},
                                                             {"bytes", sh.bytes},
                                                             {"rows", sh.rows},
                                                             {"dram_stride", sh.dram_stride},
                                                             {"lx_stride", sh.lx_stride},
                                                             {"mcast", mask},
                                                             {"mtok", arr_tok + idx % p_.nbuf}},
                                                            k_.id),
                                            std::move(acc));
}

void MatmulCoreEmitter::emit_loads(const MatmulStep& s, int parts, int64_t piece, int64_t pieces) {
  const MatmulGrid& g = p_.grid;
  const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0, esA = p_.esA;
  if (s.load_a && (parts & 1) && p_.a_lx < 0)
    load_tile(g.mcast_a, ga_, my_a_, s.a_idx, kFreeA, kArrA, addr(p_.A, s.b, s.m0, s.k0),
              p_.A_slot[static_cast<size_t>(s.a_slot)],
              DmaShape{kt * esA, mt, p_.A.s0 * esA, g.tk * esA});
  if (s.load_b && (parts & 2)) {
    // The B tile: K rows, or N rows when transposed; a piece is a run of those rows.
    DmaShape sh = p_.trans_b ? DmaShape{kt * esA, nt, p_.B.s1 * esA, g.tk * esA}
                             : DmaShape{nt * esA, kt, p_.B.s0 * esA, g.tn * esA};
    const int64_t r0 = sh.rows * piece / pieces, r1 = sh.rows * (piece + 1) / pieces;
    if (r1 > r0) {
      const uint64_t dram =
          addr(p_.B, s.b, s.k0, s.n0) + static_cast<uint64_t>(r0 * sh.dram_stride);
      const int64_t lx = p_.B_slot[static_cast<size_t>(s.b_slot)] + r0 * sh.lx_stride;
      sh.rows = r1 - r0;
      load_tile(g.mcast_b, gb_, my_b_, s.b_idx, kFreeB, kArrB, dram, lx, sh);
    }
  }
  if (owner_ && s.first_k && (parts & 4)) emit_output_loads(s);
}

// Tiles multicast by another core: their arrival token, on the ring queue, stands for the
// remote write of the slot (the PT queues are ordered after it automatically). One wait per
// part another core loads.
void MatmulCoreEmitter::arrivals(const std::vector<std::pair<int64_t, int64_t>>& rows, int64_t gs,
                                 int64_t pos, int64_t idx, int64_t tok, int64_t slot,
                                 int64_t bytes) {
  for (int64_t q = 0; q < gs; ++q) {
    const auto [nr, rb] = rows[static_cast<size_t>(idx)];
    const auto [r0, r1] = mcast_part(nr, rb, gs, idx, q, part_min_);
    if (q != pos && r1 > r0) raw_wait(ring_q, tok + idx % p_.nbuf, lx_range(slot, bytes));
  }
}

// The slot is free for the group's tile nbuf ahead: tell its loaders (after both PTs).
void MatmulCoreEmitter::release(bool mcast, const std::vector<int64_t>& group, int64_t pos,
                                int64_t idx, const std::vector<std::pair<int64_t, int64_t>>& rows,
                                int64_t free_tok, int64_t slot, int64_t bytes) {
  const int64_t next = idx + p_.nbuf;
  if (!mcast || next >= static_cast<int64_t>(rows.size())) return;
  const auto gs = static_cast<int64_t>(group.size());
  for (int64_t q = 0; q < gs; ++q) {
    const auto [nr, rb] = rows[static_cast<size_t>(next)];
    const auto [r0, r1] = mcast_part(nr, rb, gs, next, q, part_min_);
    if (q != pos && r1 > r0)
      raw_sig(ring_q, free_tok + pos, group[static_cast<size_t>(q)], lx_range(slot, bytes));
  }
}

void MatmulCoreEmitter::emit_compute(const MatmulStep& s) {
  const MatmulGrid& g = p_.grid;
  const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0;
  const int64_t tm = g.tm, tn = g.tn, tk = g.tk, esA = p_.esA;
  const int64_t bs = p_.B_slot[static_cast<size_t>(s.b_slot)];
  int64_t as = p_.A_slot[static_cast<size_t>(s.a_slot)], lda = tk;
  if (p_.a_lx >= 0) {  // the core's rows of A in the LX plan's slot, row after row
    const int64_t M = p_.A.rows, K = p_.A.cols;
    as = p_.a_lx + ((s.b * M + s.m0 - (w_.b0 * M + w_.m0)) * K + s.k0) * esA;
    lda = K;
  }
  const int64_t a_bytes = tm * tk * esA, b_bytes = tk * tn * esA;
  if (g.mcast_a && s.load_a)
    arrivals(a_rows_, static_cast<int64_t>(ga_.size()), my_a_, s.a_idx, kArrA, as, a_bytes);
  if (g.mcast_b && s.load_b)
    arrivals(b_rows_, static_cast<int64_t>(gb_.size()), my_b_, s.b_idx, kArrB, bs, b_bytes);
  auto halves = split_rows(mt);
  const int64_t cslot = p_.C_slot[static_cast<size_t>(s.ctile % p_.cs)];
  for (int cl = 0; cl < 2; ++cl) {
    auto [h0, h1] = halves[static_cast<size_t>(cl)];
    if (h1 <= h0) continue;
    em_.mm(cl, as + h0 * lda * esA, bs, cslot + h0 * tn * 4, h1 - h0, nt, kt, lda,
           p_.trans_b ? tk : tn, tn, p_.A.dt, !s.first_k, p_.trans_b);
  }
  if (s.a_last) release(g.mcast_a, ga_, my_a_, s.a_idx, a_rows_, kFreeA, as, a_bytes);
  if (s.b_last) release(g.mcast_b, gb_, my_b_, s.b_idx, b_rows_, kFreeB, bs, b_bytes);
}

// K split: partial sums along the chain ik = 0 -> 1 -> ... -> gk-1 (the owner).
void MatmulCoreEmitter::emit_reduce(const MatmulStep& s) {
  if (p_.grid.gk == 1) return;
  const int64_t cslot = p_.C_slot[static_cast<size_t>(s.ctile % p_.cs)];
  const int64_t bytes = (s.m1 - s.m0) * p_.grid.tn * 4;
  if (w_.ik > 0) {
    // Ready for the predecessor's partial sum once this core's own matmuls are done.
    raw_sig(ring_q, kRedReady, core_ - 1, lx_range(cslot, bytes));
    raw_wait(ring_q, kRedArr, lx_range(cslot, bytes));
  }
  if (!owner_) {
    raw_wait(ring_q, kRedReady, Access{});
    Access acc;
    acc.lx_read.push_back(ByteRange{cslot, cslot + bytes});
    k_.cores[static_cast<size_t>(core_)].emit(isa::make_instr(isa::Opcode::RingReduce,
                                                              {{"src", cslot},
                                                               {"dst_core", core_ + 1},
                                                               {"dst", cslot},
                                                               {"bytes", bytes},
                                                               {"tok", kRedArr}},
                                                              k_.id),
                                              std::move(acc));
  }
}

}  // namespace spyre::compiler
