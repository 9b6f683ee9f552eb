// DMA engine timing (formulas in dma.h).
#include <algorithm>
#include <cstring>
#include <utility>

#include "spyre/sim/dma.h"

#include "spyre/sim/device_layout.h"

namespace spyre::sim {

namespace {
Cycle ceil_div(int64_t a, int64_t b) { return static_cast<Cycle>((a + b - 1) / b); }
}  // namespace

std::vector<int64_t> index_vector(const uint8_t* lx, const isa::Instr& in) {
  const int64_t n = std::max<int64_t>(0, SPYRE_OPERAND(in, "n"));
  const bool i32 = SPYRE_OPERAND(in, "idt") == static_cast<int64_t>(isa::DType::I32);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (i32) {
      int32_t v;
      std::memcpy(&v, lx + SPYRE_OPERAND(in, "idx") + 4 * i, 4);
      out[static_cast<size_t>(i)] = v;
    } else {
      std::memcpy(&out[static_cast<size_t>(i)], lx + SPYRE_OPERAND(in, "idx") + 8 * i, 8);
    }
  }
  return out;
}

DmaEngine::DmaEngine(Env& env, MemPort& dram, int core, bool write, RingPort& ring, LxPort& lx,
                     std::function<LxPort&(int)> ring_lx)
    : env_(env),
      dram_(dram),
      core_(core),
      write_(write),
      rate_(std::max<int64_t>(
          1, write ? env.cfg.dma_write_bytes_per_cycle : env.cfg.dma_read_bytes_per_cycle)),
      ring_(ring),
      lx_(lx),
      ring_lx_(std::move(ring_lx)) {}

void DmaEngine::start(const isa::Instr& in, Callback done) {
  indexed_.clear();
  if (in.op == isa::Opcode::DmaGather || in.op == isa::Opcode::DmaScatter) {
    // n rows at DRAM addresses from the LX index vector
    bytes_ = SPYRE_OPERAND(in, "bytes");
    rows_ = SPYRE_OPERAND(in, "n");
    reps_ = outer_ = 1;
    lx0_ = SPYRE_OPERAND(in, "lx");
    lx_stride_ = SPYRE_OPERAND(in, "lx_stride");
    lx_rep_ = lx_outer_ = dram_stride_ = dram_rep_ = dram_outer_ = 0;
    dram0_ = 0;
    // A timing-only run never writes LX, so its index values are all 0: no LX storage needed.
    if (env_.functional) env_.settle_data();
    const std::vector<int64_t> idx =
        env_.functional ? index_vector(lx_.data(), in)
                        : std::vector<int64_t>(static_cast<size_t>(std::max<int64_t>(0, rows_)));
    const int64_t limit = SPYRE_OPERAND(in, "limit");
    for (int64_t k : idx)  // out-of-range only in timing-only runs (no data): row 0
      indexed_.push_back(SPYRE_OPERAND(in, "dram") +
                         (k >= 0 && k < limit ? k : 0) * SPYRE_OPERAND(in, "dram_stride"));
    if (bytes_ <= 0 || rows_ <= 0) outer_ = 0;
  } else {
    bytes_ = SPYRE_OPERAND(in, "bytes");
    rows_ = SPYRE_OPERAND(in, "rows");
    reps_ = SPYRE_OPERAND(in, "reps");
    outer_ = SPYRE_OPERAND(in, "outer");
    lx0_ = SPYRE_OPERAND(in, "lx");
    lx_stride_ = SPYRE_OPERAND(in, "lx_stride");
    lx_rep_ = SPYRE_OPERAND(in, "lx_rep");
    lx_outer_ = SPYRE_OPERAND(in, "lx_outer");
    dram0_ = SPYRE_OPERAND(in, "dram");
    dram_stride_ = SPYRE_OPERAND(in, "dram_stride");
    dram_rep_ = SPYRE_OPERAND(in, "dram_rep");
    dram_outer_ = SPYRE_OPERAND(in, "dram_outer");
    if (bytes_ <= 0 || rows_ <= 0 || reps_ <= 0) outer_ = 0;  // nothing to move
  }
  runs_.clear();
  run_i_ = 0;
  if (env_.layout && env_.layout->active() && indexed_.empty() && outer_ > 0) build_runs();
  targets_.clear();
  if (!write_ && in.op == isa::Opcode::DmaLoad) {
    const auto mask = static_cast<uint64_t>(SPYRE_OPERAND(in, "mcast"));
    for (int c = 0; c < 64 && c < static_cast<int>(env_.cfg.cores); ++c)
      if (c != core_ && (mask >> c & 1u)) targets_.push_back(c);
  }
  outer_i_ = rep_ = row_ = off_ = 0;
  outstanding_ = in_transit_ = in_flight_bytes_ = 0;
  finishing_ = false;
  done_ = std::move(done);
  next_issue_ =
      env_.sched.now() + static_cast<Cycle>(std::max<int64_t>(0, env_.cfg.dma_setup_cycles));
  last_in_lx_ = next_issue_;
  issue_pending_ = true;
  env_.sched.at(next_issue_, [this] {
    issue_pending_ = false;
    issue();
  });
}

std::pair<int64_t, int64_t> DmaEngine::row_start(int64_t o, int64_t rep, int64_t row) const {
  const int64_t dram = indexed_.empty() ? dram0_ : indexed_[static_cast<size_t>(row)];
  return {lx0_ + o * lx_outer_ + rep * lx_rep_ + row * lx_stride_,
          dram + o * dram_outer_ + rep * dram_rep_ + row * dram_stride_};
}

void DmaEngine::build_runs() {
  const DeviceLayout& layout = *env_.layout;
  const int64_t stick = layout.stick_bytes();
  struct Stick {
    int64_t dram, bytes, lx;
  };
  std::vector<Stick> sticks;
  for (int64_t o = 0; o < outer_; ++o)
    for (int64_t rep = 0; rep < reps_; ++rep)
      for (int64_t row = 0; row < rows_; ++row) {
        const auto [lx, dram] = row_start(o, rep, row);
        for (int64_t off = 0; off < bytes_;) {
          const int64_t a = dram + off;
          const int64_t n = std::min(bytes_ - off, stick - a % stick);  // to the stick's end
          sticks.push_back(
              Stick{static_cast<int64_t>(layout.physical(static_cast<uint64_t>(a))), n, lx + off});
          off += n;
        }
      }
  std::stable_sort(sticks.begin(), sticks.end(),
                   [](const Stick& a, const Stick& b) { return a.dram < b.dram; });
  const int64_t burst = std::max<int64_t>(1, env_.cfg.dma_burst_bytes);
  for (const Stick& k : sticks) {
    if (!runs_.empty()) {
      Run& r = runs_.back();
      if (r.dram + r.bytes == k.dram && r.bytes + k.bytes <= burst) {
        r.bytes += k.bytes;
        LxRegion& g = r.lx.back();
        if (g.rows == 1 && g.base + g.row_bytes == k.lx) {
          g.row_bytes += k.bytes;  // contiguous in LX too
        } else if (g.row_bytes == k.bytes && k.lx > g.base &&
                   (g.rows == 1 ? k.lx - g.base >= g.row_bytes
                                : k.lx == g.base + g.rows * g.row_stride)) {
          if (g.rows == 1) g.row_stride = k.lx - g.base;
          ++g.rows;  // evenly spaced in LX: one more row of the region
        } else {
          r.lx.push_back(LxRegion{k.lx, k.bytes});
        }
        continue;
      }
    }
    runs_.push_back(Run{k.dram, k.bytes, LxRegions{LxRegion{k.lx, k.bytes}}});
  }
}

LxRegions DmaEngine::lx_of(int64_t piece, int64_t lx_addr, int64_t run) const {
  if (run >= 0) return runs_[static_cast<size_t>(run)].lx;
  return LxRegions{LxRegion{lx_addr, piece}};
}

int64_t DmaEngine::next_piece() const {
  if (!runs_.empty()) return runs_[run_i_].bytes;
  return std::min(std::max<int64_t>(1, env_.cfg.dma_burst_bytes), bytes_ - off_);
}

bool DmaEngine::may_issue(int64_t piece) const {
  // The request limit, then the byte budget; a piece larger than the budget goes alone.
  if (outstanding_ >= env_.cfg.dma_max_outstanding) return false;
  return outstanding_ == 0 || in_flight_bytes_ + piece <= env_.cfg.dma_max_outstanding_bytes;
}

void DmaEngine::issue() {
  if (!remaining()) return maybe_done();
  const int64_t piece = next_piece();
  if (!may_issue(piece)) return;  // landed() resumes
  int64_t lx_addr = 0, dram_addr = 0, run = -1;
  if (!runs_.empty()) {
    run = static_cast<int64_t>(run_i_++);
    dram_addr = runs_[static_cast<size_t>(run)].dram;
  } else {
    const auto [lx, dram] = row_start(outer_i_, rep_, row_);
    lx_addr = lx + off_;
    dram_addr = dram + off_;
    off_ += piece;
    if (off_ >= bytes_) {
      off_ = 0;
      if (++row_ >= rows_) {
        row_ = 0;
        if (++rep_ >= reps_) rep_ = 0, ++outer_i_;
      }
    }
  }
  ++outstanding_;
  in_flight_bytes_ += piece;
  const Cycle now = env_.sched.now();
  const Cycle dur = ceil_div(piece, rate_);
  Cycle stall = 0;
  if (write_) {  // the piece is read from LX before it goes out
    stall = lx_.access(now, dur, lx_of(piece, lx_addr, run), now) - (now + dur);
  }
  if (stall == 0)
    submit(piece, lx_addr, dram_addr, run);
  else
    env_.sched.at(now + stall, [this, piece, lx_addr, dram_addr, run] {
      submit(piece, lx_addr, dram_addr, run);
    });
  next_issue_ = now + stall + dur;
  if (remaining() && may_issue(next_piece())) {
    issue_pending_ = true;
    env_.sched.at(next_issue_, [this] {
      issue_pending_ = false;
      issue();
    });
  }
}

void DmaEngine::submit(int64_t piece, int64_t lx_addr, int64_t dram_addr, int64_t run) {
  const int64_t word = std::max<int64_t>(1, env_.cfg.dram_word_bytes);
  DramRequest r;
  r.core = core_;
  r.bytes = static_cast<uint64_t>(piece);
  r.cost_bytes = static_cast<uint64_t>((piece + word - 1) / word * word);
  r.write = write_;
  r.addr = static_cast<uint64_t>(dram_addr);  // bank-level DRAM models map it
  r.landed = [this, piece, lx_addr, run] { landed(piece, lx_addr, run); };
  dram_.submit(std::move(r));
}

void DmaEngine::landed(int64_t piece, int64_t lx_addr, int64_t run) {
  --outstanding_;
  in_flight_bytes_ -= piece;
  const Cycle now = env_.sched.now();
  if (!write_) {
    // The piece was written into LX over the last ceil(piece/rate) cycles.
    const Cycle dur = ceil_div(piece, rate_);
    const Cycle start = now > dur ? now - dur : 0;
    const Cycle in_lx =
        std::max(now, lx_.access(start, now - start, lx_of(piece, lx_addr, run), now));
    if (!targets_.empty()) {
      ++in_transit_;
      auto forward = [this, piece, lx_addr, run] {
        ring_.request(core_, targets_, static_cast<uint64_t>(piece),
                      [this, piece, lx_addr, run](const std::vector<RingArrival>& arr) {
                        const Cycle d = ceil_div(
                            piece, std::max<int64_t>(1, env_.cfg.ring_link_bytes_per_cycle));
                        Cycle last = 0;
                        for (const RingArrival& a : arr)
                          last = std::max(last, ring_lx_(a.core).access(a.cycle - d, d,
                                                                        lx_of(piece, lx_addr, run),
                                                                        env_.sched.now()));
                        delivered(last);
                      });
      };
      if (in_lx == now)
        forward();
      else
        env_.sched.at(in_lx, forward);
    } else {
      last_in_lx_ = std::max(last_in_lx_, in_lx);
    }
  }
  if (!remaining()) return maybe_done();
  if (!issue_pending_) {
    issue_pending_ = true;
    env_.sched.at(std::max(next_issue_, now), [this] {
      issue_pending_ = false;
      issue();
    });
  }
}

void DmaEngine::delivered(Cycle at) {
  --in_transit_;
  last_in_lx_ = std::max(last_in_lx_, at);
  maybe_done();
}

void DmaEngine::maybe_done() {
  if (remaining() || outstanding_ > 0 || in_transit_ > 0 || !done_ || finishing_) return;
  const Cycle at = std::max(env_.sched.now(), last_in_lx_);
  if (at == env_.sched.now()) return std::exchange(done_, nullptr)();
  finishing_ = true;
  env_.sched.at(at, [this] {
    finishing_ = false;
    std::exchange(done_, nullptr)();
  });
}

}  // namespace spyre::sim
