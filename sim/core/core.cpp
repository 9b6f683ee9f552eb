// Core: sequencer, unit queues and token table (behaviour in core.h).
#include "spyre/sim/core.h"

#include <cstring>

#include "spyre/error.h"
#include "spyre/sim/chip.h"
#include "spyre/sim/units.h"

namespace spyre::sim {

using isa::Opcode;

namespace {
const std::vector<isa::Instr> kNoInstrs;
bool is_dma(Opcode op) { return op == Opcode::DmaLoad || op == Opcode::DmaStore; }
bool is_pt(Opcode op) { return op == Opcode::PtMatmul; }
}  // namespace

Core::Core(Env& env, Chip& chip, int id)
    : env_(env),
      chip_(chip),
      id_(id),
      stream_(id < static_cast<int>(env.program.cores.size())
                  ? &env.program.cores[static_cast<size_t>(id)]
                  : &kNoInstrs),
      lx_(env.cfg.lx_size_bytes),
      dma_in_(std::make_unique<DmaEngine>(env, chip.dram(), id, false)),
      dma_out_(std::make_unique<DmaEngine>(env, chip.dram(), id, true)) {
  if (env.trace && id < static_cast<int>(env.program.num_cores))
    for (int q = 0; q < isa::kNumQueues; ++q)
      q_[q].track = env.trace->track("core " + std::to_string(id),
                                     isa::queue_name(static_cast<isa::Queue>(q)));
}

void Core::start() {
  if (id_ >= static_cast<int>(env_.program.num_cores)) {  // idle core: nothing to run
    phase_ = Phase::Halted;
    return;
  }
  phase_ = Phase::Decoding;
  env_.sched.at(env_.sched.now() + static_cast<Cycle>(env_.cfg.issue_cycles), [this] { decoded(); });
}

bool Core::drained() const {
  for (const auto& q : q_)
    if (q.busy || !q.entries.empty()) return false;
  return true;
}

// ---- sequencer ----

void Core::decoded() { try_place(); }

void Core::kick_sequencer() {
  if (seq_pending_ || (phase_ != Phase::StallFull && phase_ != Phase::WaitDrain)) return;
  seq_pending_ = true;
  env_.sched.at(env_.sched.now(), [this] {
    seq_pending_ = false;
    if (phase_ == Phase::StallFull || phase_ == Phase::WaitDrain) try_place();
  });
}

void Core::try_place() {
  const Cycle now = env_.sched.now();
  const bool at_end = pc_ >= stream_->size();
  const Opcode op = at_end ? Opcode::Halt : instr(pc_).op;
  if (op == Opcode::Barrier || op == Opcode::Halt) {
    if (!drained()) {
      phase_ = Phase::WaitDrain;
      return;
    }
    if (op == Opcode::Halt) {
      phase_ = Phase::Halted;
      halt_cycle_ = now;
      return;
    }
    phase_ = Phase::AtBarrier;
    chip_.arrive_barrier(id_);
    return;
  }
  const int q = static_cast<int>(isa::queue_of(instr(pc_)));
  if (static_cast<int64_t>(q_[q].entries.size()) >= env_.cfg.queue_depth) {
    if (phase_ != Phase::StallFull) stall_since_ = now;
    phase_ = Phase::StallFull;
    stall_queue_ = q;
    return;
  }
  if (phase_ == Phase::StallFull) full_stall_cycles_ += now - stall_since_;
  q_[q].entries.push_back(pc_++);
  wake(q);
  phase_ = Phase::Decoding;
  env_.sched.at(now + static_cast<Cycle>(env_.cfg.issue_cycles), [this] { decoded(); });
}

void Core::release_barrier() {
  ++pc_;
  phase_ = Phase::Decoding;
  env_.sched.at(env_.sched.now() + static_cast<Cycle>(env_.cfg.issue_cycles), [this] { decoded(); });
}

// ---- tokens ----

void Core::add_token(int64_t tok) {
  ++tokens_[tok];
  for (int q = 0; q < isa::kNumQueues; ++q)
    if (q_[q].waiting_tok == tok) wake(q);
}

// ---- units ----

void Core::wake(int q) {
  if (q_[q].pump_pending) return;
  q_[q].pump_pending = true;
  env_.sched.at(env_.sched.now(), [this, q] {
    q_[q].pump_pending = false;
    pump(q);
  });
}

void Core::pump(int q) {
  QueueState& s = q_[q];
  const Cycle now = env_.sched.now();
  while (!s.busy && !s.entries.empty()) {
    const size_t i = s.entries.front();
    const isa::Instr& in = instr(i);
    if ((in.op == Opcode::Signal || in.op == Opcode::Wait) && in.get("tok") < 0)
      throw Error(ref(i).where(), "token " + std::to_string(in.get("tok")) + " is negative");
    if (in.op == Opcode::Signal) {
      s.entries.pop_front();
      ++s.st.instructions;
      chip_.signal(id_, in.get("core") < 0 ? id_ : static_cast<int>(in.get("core")), in.get("tok"));
      kick_sequencer();
      continue;
    }
    if (in.op == Opcode::Wait) {
      const int64_t tok = in.get("tok");
      auto it = tokens_.find(tok);
      if (it == tokens_.end() || it->second <= 0) {
        if (s.waiting_tok < 0) s.wait_since = now;
        s.waiting_tok = tok;
        return;
      }
      --it->second;
      if (s.waiting_tok >= 0) {
        s.st.wait_cycles += now - s.wait_since;
        if (env_.trace && now > s.wait_since)
          env_.trace->span(s.track, "wait tok " + std::to_string(tok), s.wait_since, now - s.wait_since,
                           in.kernel < env_.program.kernels.size() ? env_.program.kernels[in.kernel] : "");
        s.waiting_tok = -1;
      }
      s.entries.pop_front();
      ++s.st.instructions;
      kick_sequencer();
      continue;
    }
    s.entries.pop_front();
    launch(q, i);
    kick_sequencer();
  }
  if (s.entries.empty() && !s.busy) kick_sequencer();  // a barrier or halt may wait for this
}

void Core::check_bounds(size_t i) const {
  const isa::Instr& in = instr(i);
  const InstrRef at = ref(i);
  const int64_t lx_size = env_.cfg.lx_size_bytes;
  const int64_t dram_size = static_cast<int64_t>(env_.program.dram_bytes);
  if (is_dma(in.op)) {
    const bool load = in.op == Opcode::DmaLoad;
    const int64_t bytes = in.get("bytes"), rows = in.get("rows"), reps = in.get("reps");
    ByteRange d = strided_range(
        in.get("dram"), {{reps, in.get("dram_rep")}, {rows, in.get("dram_stride")}}, bytes);
    ByteRange l = strided_range(
        in.get("lx"), {{reps, in.get("lx_rep")}, {rows, in.get("lx_stride")}}, bytes);
    check_range(load ? d : l, load ? dram_size : lx_size, load ? "DRAM" : "LX", at);
    check_range(load ? l : d, load ? lx_size : dram_size, load ? "LX" : "DRAM", at);
  } else if (in.op == Opcode::RingSend) {
    check_range(strided_range(in.get("src"), {}, in.get("bytes")), lx_size, "LX", at);
    check_range(strided_range(in.get("dst"), {}, in.get("bytes")), lx_size, "LX", at);
  } else {
    for (const ByteRange& r : is_pt(in.op) ? pt_lx_ranges(in) : sfp_lx_ranges(in))
      check_range(r, lx_size, "LX", at);
  }
}

void Core::launch(int q, size_t i) {
  QueueState& s = q_[q];
  const isa::Instr& in = instr(i);
  check_bounds(i);
  s.busy = true;
  s.cur = i;
  s.start = env_.sched.now();
  auto done = [this, q] { complete(q); };
  switch (in.op) {
    case Opcode::DmaLoad: dma_in_->start(in, done); return;
    case Opcode::DmaStore: dma_out_->start(in, done); return;
    case Opcode::RingSend: {
      const int dst = static_cast<int>(in.get("dst_core"));
      const auto bytes = static_cast<uint64_t>(in.get("bytes"));
      env_.sched.at(chip_.ring().reserve(id_, dst, bytes, s.start), done);
      return;
    }
    case Opcode::PtMatmul: env_.sched.at(s.start + pt_cycles(env_.cfg, in), done); return;
    default: env_.sched.at(s.start + sfp_cycles(env_.cfg, in), done); return;
  }
}

void Core::execute(size_t i) {
  const isa::Instr& in = instr(i);
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore: {
      const bool load = in.op == Opcode::DmaLoad;
      uint8_t* lx = lx_.data();
      uint8_t* dram = chip_.dram_image().data();
      const int64_t bytes = in.get("bytes"), rows = in.get("rows"), reps = in.get("reps");
      const int64_t d0 = in.get("dram"), l0 = in.get("lx");
      const int64_t ds = in.get("dram_stride"), ls = in.get("lx_stride");
      const int64_t dr = in.get("dram_rep"), lr = in.get("lx_rep");
      for (int64_t rep = 0; rep < reps; ++rep)
        for (int64_t r = 0; r < rows; ++r) {
          uint8_t* dp = dram + d0 + rep * dr + r * ds;
          uint8_t* lp = lx + l0 + rep * lr + r * ls;
          if (load)
            std::memmove(lp, dp, static_cast<size_t>(bytes));
          else
            std::memmove(dp, lp, static_cast<size_t>(bytes));
        }
      return;
    }
    case Opcode::RingSend: {
      Core& dst = chip_.core(static_cast<int>(in.get("dst_core")));
      std::memmove(dst.lx().data() + in.get("dst"), lx_.data() + in.get("src"),
                   static_cast<size_t>(in.get("bytes")));
      return;
    }
    case Opcode::PtMatmul: pt_execute(lx_.data(), in); return;
    default: sfp_execute(lx_.data(), in); return;
  }
}

void Core::complete(int q) {
  QueueState& s = q_[q];
  const Cycle now = env_.sched.now();
  const isa::Instr& in = instr(s.cur);
  if (env_.functional) execute(s.cur);
  if (in.op == Opcode::RingSend && in.get("tok") >= 0)
    chip_.core(static_cast<int>(in.get("dst_core"))).add_token(in.get("tok"));
  s.st.busy_cycles += now - s.start;
  ++s.st.instructions;
  chip_.note_kernel(in.kernel, s.start, now);
  if (env_.trace)
    env_.trace->span(s.track, isa::op_info(in.op).mnemonic, s.start, now - s.start,
                     in.kernel < env_.program.kernels.size() ? env_.program.kernels[in.kernel] : "",
                     operand_summary(in));
  s.busy = false;
  pump(q);
}

std::string Core::stuck_report() const {
  std::string s = "core " + std::to_string(id_) + ": ";
  if (pc_ < stream_->size()) {
    s += "next instruction #" + std::to_string(pc_) + " " +
         std::string(isa::op_info(instr(pc_).op).mnemonic);
  } else {
    s += "end of stream";
  }
  switch (phase_) {
    case Phase::StallFull:
      s += " waits for a slot in full queue " +
           std::string(isa::queue_name(static_cast<isa::Queue>(stall_queue_)));
      break;
    case Phase::WaitDrain: s += " waits for its queues to drain"; break;
    case Phase::AtBarrier: s += " waits at the barrier"; break;
    default: break;
  }
  for (int q = 0; q < isa::kNumQueues; ++q) {
    const QueueState& st = q_[q];
    if (st.waiting_tok < 0) continue;
    auto it = tokens_.find(st.waiting_tok);
    s += "; queue " + std::string(isa::queue_name(static_cast<isa::Queue>(q))) +
         " waits on token " + std::to_string(st.waiting_tok) + " (value " +
         std::to_string(it == tokens_.end() ? 0 : it->second) + ") at instruction #" +
         std::to_string(st.entries.front());
  }
  return s;
}

}  // namespace spyre::sim
