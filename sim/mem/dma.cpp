// DMA engine timing (formulas in dma.h).
#include <algorithm>

#include "spyre/sim/dma.h"

namespace spyre::sim {

DmaEngine::DmaEngine(Env& env, DramModel& dram, int core, bool write)
    : env_(env),
      dram_(dram),
      core_(core),
      write_(write),
      rate_(std::max<int64_t>(1, write ? env.cfg.dma_write_bytes_per_cycle
                                       : env.cfg.dma_read_bytes_per_cycle)) {}

void DmaEngine::start(const isa::Instr& in, std::function<void()> done) {
  bytes_ = in.get("bytes");
  rows_ = in.get("rows");
  reps_ = in.get("reps");
  if (bytes_ <= 0 || rows_ <= 0) reps_ = 0;  // nothing to move
  rep_ = row_ = off_ = 0;
  outstanding_ = 0;
  done_ = std::move(done);
  next_issue_ = env_.sched.now() + static_cast<Cycle>(std::max<int64_t>(0, env_.cfg.dma_setup_cycles));
  issue_pending_ = true;
  env_.sched.at(next_issue_, [this] { issue_pending_ = false; issue(); });
}

void DmaEngine::issue() {
  if (!remaining()) {
    if (outstanding_ == 0 && done_) std::exchange(done_, nullptr)();
    return;
  }
  if (outstanding_ >= env_.cfg.dma_max_outstanding) return;  // landed() resumes
  const int64_t burst = std::max<int64_t>(1, env_.cfg.dma_burst_bytes);
  const int64_t word = std::max<int64_t>(1, env_.cfg.dram_word_bytes);
  int64_t piece = std::min(burst, bytes_ - off_);
  off_ += piece;
  if (off_ >= bytes_) {
    off_ = 0;
    if (++row_ >= rows_) row_ = 0, ++rep_;
  }
  ++outstanding_;
  DramRequest r;
  r.core = core_;
  r.bytes = static_cast<uint64_t>(piece);
  r.cost_bytes = static_cast<uint64_t>((piece + word - 1) / word * word);
  r.write = write_;
  r.landed = [this] { landed(); };
  dram_.submit(std::move(r));
  next_issue_ = env_.sched.now() + static_cast<Cycle>((piece + rate_ - 1) / rate_);
  if (remaining() && outstanding_ < env_.cfg.dma_max_outstanding) {
    issue_pending_ = true;
    env_.sched.at(next_issue_, [this] { issue_pending_ = false; issue(); });
  }
}

void DmaEngine::landed() {
  --outstanding_;
  if (!remaining()) {
    if (outstanding_ == 0 && done_) std::exchange(done_, nullptr)();
    return;
  }
  if (!issue_pending_) {
    issue_pending_ = true;
    env_.sched.at(std::max(next_issue_, env_.sched.now()), [this] { issue_pending_ = false; issue(); });
  }
}

}  // namespace spyre::sim
