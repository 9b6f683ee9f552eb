// Core: sequencer, unit queues and token table (behaviour in core.h).
#include "spyre/sim/core.h"

#include <cstring>
#include <vector>

#include "spyre/error.h"
#include "spyre/sim/chip.h"
#include "spyre/sim/data_worker.h"
#include "spyre/sim/report.h"
#include "spyre/sim/units.h"

namespace spyre::sim {

using isa::Opcode;

namespace {
const std::vector<isa::Instr> kNoInstrs;
bool is_pt(Opcode op) { return op == Opcode::PtMatmul; }
bool is_ring(Opcode op) { return op == Opcode::RingSend || op == Opcode::RingReduce; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Core::Core(Env& env, Chip& chip, int id)
    : env_(env),
      chip_(chip),
      id_(id),
      units_lx_(chip.ports().lx(id, LxUser::Units)),
      stream_(id < static_cast<int>(env.program.cores.size())
                  ? &env.program.cores[static_cast<size_t>(id)]
                  : &kNoInstrs),
      lx_(env.cfg),
      dma_in_(std::make_unique<DmaEngine>(
          env, chip.ports().dram(id, false), id, false, chip.ports().ring(id, false),
          chip.ports().lx(id, LxUser::DmaIn),
          [&chip](int c) -> LxPort& { return chip.ring_lx(false, c); })),
      dma_out_(std::make_unique<DmaEngine>(
          env, chip.ports().dram(id, true), id, true, chip.ports().ring(id, false),
          chip.ports().lx(id, LxUser::DmaOut),
          [&chip](int c) -> LxPort& { return chip.ring_lx(false, c); })),
      loops_(isa::analyse_loops(*stream_, static_cast<size_t>(id))),
      cursor_(loops_) {
  if (env.activity && id < static_cast<int>(env.program.num_cores)) {
    const std::string group = traces::core_module(env.chip, id);
    for (int q = 0; q < isa::kNumQueues; ++q)
      busy_.emplace_back(
          group, std::string(isa::queue_name(static_cast<isa::Queue>(q))) + traces::kBusySuffix,
          kTraceWindowCycles, 1.0);
    if (env.trace) {
      seq_track_ = env.trace->track(group, "seq");
      for (int q = 0; q < isa::kNumQueues; ++q)
        q_[q].track = env.trace->track(group, isa::queue_name(static_cast<isa::Queue>(q)));
    }
  }
}

void Core::finish_trace() {
  for (auto& b : busy_) b.flush_all(*env_.activity);
}

void Core::start() {
  if (id_ >= static_cast<int>(env_.program.num_cores)) {  // idle core: nothing to run
    phase_ = Phase::Halted;
    return;
  }
  if (env_.functional) functional_lx();
  const uint64_t words = cursor_.settle(*stream_);  // the stream may open with a loop
  loop_words_ += words;
  phase_ = Phase::Decoding;
  env_.sched.at(env_.sched.now() + static_cast<Cycle>(env_.cfg.issue_cycles) +
                    static_cast<Cycle>(words) * static_cast<Cycle>(env_.cfg.loop_issue_cycles),
                [this] { decoded(); });
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

bool Core::drained_at(Cycle now) {
  if (!drained()) {
    if (phase_ != Phase::WaitDrain) drain_since_ = now;
    phase_ = Phase::WaitDrain;
    return false;
  }
  if (env_.trace && phase_ == Phase::WaitDrain && now > drain_since_)
    trace_seq("drain", drain_since_, now);
  return true;
}

void Core::try_place() {
  const Cycle now = env_.sched.now();
  const size_t pc = cursor_.pc;
  const bool at_end = pc >= stream_->size();
  const Opcode op = at_end ? Opcode::Halt : instr(pc).op;
  if (op == Opcode::HostCall) {  // after the queues drain: every write before it has landed
    if (!drained_at(now)) return;
    phase_ = Phase::AtHost;
    const isa::Instr in = loops_.materialise(instr(pc), pc, cursor_.iter);
    const Cycle cycles = chip_.host_call(in, InstrRef{id_, pc, &instr(pc)});
    env_.sched.at(now + cycles, [this, now] {
      if (env_.trace) trace_seq("host.call", now, env_.sched.now());
      advance();
    });
    return;
  }
  if (op == Opcode::Delay) {  // time outside the program: the queues go on meanwhile
    phase_ = Phase::Delaying;
    const isa::Instr in = loops_.materialise(instr(pc), pc, cursor_.iter);
    env_.sched.at(now + static_cast<Cycle>(SPYRE_OPERAND(in, "cycles")), [this, now] {
      if (env_.trace) trace_seq("sync.delay", now, env_.sched.now());
      advance();
    });
    return;
  }
  if (op == Opcode::Barrier || op == Opcode::Halt) {
    if (!drained_at(now)) return;
    if (op == Opcode::Halt) {
      phase_ = Phase::Halted;
      halt_cycle_ = now;
      return;
    }
    phase_ = Phase::AtBarrier;
    barrier_since_ = now;
    chip_.arrive_barrier(id_);
    return;
  }
  // The operands of this iteration: a stepped `cl` may change the queue.
  Slot e{pc, dyn_, cursor_.stack.empty() ? -1 : cursor_.iter[cursor_.stack.back()],
         loops_.materialise(instr(pc), pc, cursor_.iter)};
  const int q = static_cast<int>(isa::queue_of(e.in));
  if (static_cast<int64_t>(q_[q].entries.size()) >= env_.cfg.queue_depth) {
    if (phase_ != Phase::StallFull) stall_since_ = now;
    phase_ = Phase::StallFull;
    stall_queue_ = q;
    return;
  }
  if (phase_ == Phase::StallFull) {
    full_stall_cycles_ += now - stall_since_;
    if (env_.trace && now > stall_since_) trace_seq("stall", stall_since_, now);
  }
  q_[q].entries.push_back(std::move(e));
  wake(q);
  advance();
}

void Core::advance() {
  ++cursor_.pc;
  ++dyn_;
  const uint64_t words = cursor_.settle(*stream_);
  loop_words_ += words;
  phase_ = Phase::Decoding;
  env_.sched.at(env_.sched.now() + static_cast<Cycle>(env_.cfg.issue_cycles) +
                    static_cast<Cycle>(words) * static_cast<Cycle>(env_.cfg.loop_issue_cycles),
                [this] { decoded(); });
}

void Core::release_barrier() {
  if (env_.trace) trace_seq("barrier", barrier_since_, env_.sched.now());
  advance();
}

// ---- tokens ----

void Core::add_token(int64_t tok, FlowSrc src) {
  ++tokens_[tok];
  if (env_.trace) tok_src_[tok].push_back(src);  // kept in step with the count (FIFO)
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
    const Slot& e = s.entries.front();
    const isa::Instr& in = e.in;
    if ((in.op == Opcode::Signal || in.op == Opcode::Wait) && SPYRE_OPERAND(in, "tok") < 0)
      SPYRE_FAIL("spyre/core/instr", ref(e).where(),
                 "token " + std::to_string(SPYRE_OPERAND(in, "tok")) + " is negative");
    if (in.op == Opcode::Signal) {
      const int64_t core = SPYRE_OPERAND(in, "core"), tok = SPYRE_OPERAND(in, "tok");
      s.entries.pop_front();
      ++s.st.instructions;
      // The flow starts at the instruction this signal publishes: the last one of its queue.
      chip_.signal(id_, core < 0 ? id_ : static_cast<int>(core), tok,
                   env_.trace && s.has_last ? FlowSrc{s.track, s.last_start} : FlowSrc{});
      kick_sequencer();
      continue;
    }
    if (in.op == Opcode::Wait) {
      const int64_t tok = SPYRE_OPERAND(in, "tok");
      auto it = tokens_.find(tok);
      if (it == tokens_.end() || it->second <= 0) {
        if (s.waiting_tok < 0) s.wait_since = now;
        s.waiting_tok = tok;
        return;
      }
      --it->second;
      if (env_.trace) {
        auto& srcs = tok_src_[tok];
        if (!srcs.empty()) {
          if (srcs.front().track >= 0) s.flows_in.push_back(srcs.front());
          srcs.pop_front();
        }
      }
      if (s.waiting_tok >= 0) {
        s.st.wait_cycles += now - s.wait_since;
        if (env_.trace && now > s.wait_since) {
          traces::SpanArgs a;
          a.kernel = kernel_name(in);
          a.core = id_;
          a.pc = static_cast<int64_t>(e.pc);
          std::vector<traces::Arg> extra;
          loop_args(extra, e.dyn, e.iter);
          a.extra = extra.empty() ? nullptr : &extra;
          env_.trace->span(s.track, "wait tok " + std::to_string(tok), s.wait_since,
                           now - s.wait_since, a);
        }
        s.waiting_tok = -1;
      }
      s.entries.pop_front();
      ++s.st.instructions;
      kick_sequencer();
      continue;
    }
    Slot next = std::move(s.entries.front());
    s.entries.pop_front();
    launch(q, std::move(next));
    kick_sequencer();
  }
  if (s.entries.empty() && !s.busy) kick_sequencer();  // a barrier or halt may wait for this
}

void Core::launch(int q, Slot e) {
  QueueState& s = q_[q];
  check_bounds(e);
  s.cur = std::move(e);
  const isa::Instr& in = s.cur.in;
  s.busy = true;
  s.start = env_.sched.now();
  if (env_.trace && !s.flows_in.empty()) {
    for (const FlowSrc& f : s.flows_in)
      env_.trace->flow(chip_.next_flow_id(), f.track, f.t, s.track, s.start);
    s.flows_in.clear();
  }
  auto done = [this, q] { complete(q); };
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaGather: dma_in_->start(in, done); return;
    case Opcode::DmaStore:
    case Opcode::DmaScatter: dma_out_->start(in, done); return;
    case Opcode::RingSend:
    case Opcode::RingReduce: launch_ring(q); return;
    default: {
      const Cycle cycles =
          is_pt(in.op)
              ? static_cast<Cycle>(s.pt_pipe.start(env_.cfg, in, static_cast<double>(s.start)))
              : sfp_cycles(env_.cfg, in);
      const Cycle end = units_lx_.access(s.start, cycles, lx_regions(in), s.start);
      if (is_pt(in.op)) s.pt_pipe.end = static_cast<double>(end);
      env_.sched.at(end, done);
      return;
    }
  }
}

void Core::launch_ring(int q) {
  const isa::Instr& in = q_[q].cur.in;
  const bool red = in.op == Opcode::RingReduce;
  const int dst = static_cast<int>(SPYRE_OPERAND(in, "dst_core"));
  const int64_t bytes = SPYRE_OPERAND(in, "bytes");
  RingPort& ring = chip_.ports().ring(id_, red);
  ring.request(
      id_, {dst}, static_cast<uint64_t>(bytes),
      [this, q, red, dst, bytes, src = SPYRE_OPERAND(in, "src"),
       to = SPYRE_OPERAND(in, "dst")](const std::vector<RingArrival>& arr) {
        const RingArrival& a = arr.front();
        const Cycle now = env_.sched.now();
        const Cycle d = static_cast<Cycle>(
            ceil_div(bytes, std::max<int64_t>(1, env_.cfg.ring_link_bytes_per_cycle)));
        const Cycle src_end =
            chip_.ring_lx(red, id_).access(a.start, d, {LxRegion{src, bytes}}, now);
        const Cycle dst_end = chip_.ring_lx(red, dst).access(
            a.cycle - d, d, {LxRegion{to, bytes, 1, 0, red ? 2 : 1}}, now);
        const Cycle end =
            std::max({a.cycle, src_end, dst_end}) +
            (red ? static_cast<Cycle>(std::max<int64_t>(0, env_.cfg.ring_reduce_latency_cycles))
                 : 0);
        env_.sched.at(end, [this, q] { complete(q); });
      });
}

void Core::execute(const isa::Instr& in) {
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore: {
      const bool load = in.op == Opcode::DmaLoad;
      uint8_t* lx = lx_bytes_;
      uint8_t* dram = chip_.dram_data();
      const int64_t bytes = SPYRE_OPERAND(in, "bytes"), rows = SPYRE_OPERAND(in, "rows"),
                    reps = SPYRE_OPERAND(in, "reps");
      const int64_t outer = SPYRE_OPERAND(in, "outer");
      const int64_t d0 = SPYRE_OPERAND(in, "dram"), l0 = SPYRE_OPERAND(in, "lx");
      const int64_t ds = SPYRE_OPERAND(in, "dram_stride"), ls = SPYRE_OPERAND(in, "lx_stride");
      const int64_t dr = SPYRE_OPERAND(in, "dram_rep"), lr = SPYRE_OPERAND(in, "lx_rep");
      const int64_t dout = SPYRE_OPERAND(in, "dram_outer"), lout = SPYRE_OPERAND(in, "lx_outer");
      std::vector<uint8_t*> lxs{lx};
      if (load)
        for (int c : mcast_targets(in)) lxs.push_back(chip_.core(c).lx_bytes());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t rep = 0; rep < reps; ++rep)
          for (int64_t r = 0; r < rows; ++r) {
            uint8_t* dp = dram + d0 + o * dout + rep * dr + r * ds;
            const int64_t lo = l0 + o * lout + rep * lr + r * ls;
            if (!load) {
              std::memmove(dp, lx + lo, static_cast<size_t>(bytes));
              continue;
            }
            for (uint8_t* l : lxs) std::memmove(l + lo, dp, static_cast<size_t>(bytes));
          }
      return;
    }
    case Opcode::DmaGather: {
      const std::vector<int64_t> idx = index_vector(lx_bytes_, in);
      for (size_t j = 0; j < idx.size(); ++j)
        std::memmove(lx_bytes_ + SPYRE_OPERAND(in, "lx") +
                         static_cast<int64_t>(j) * SPYRE_OPERAND(in, "lx_stride"),
                     chip_.dram_data() + SPYRE_OPERAND(in, "dram") +
                         idx[j] * SPYRE_OPERAND(in, "dram_stride"),
                     static_cast<size_t>(SPYRE_OPERAND(in, "bytes")));
      return;
    }
    case Opcode::DmaScatter: {  // in order of i: a later row wins where rows overlap
      const std::vector<int64_t> idx = index_vector(lx_bytes_, in);
      for (size_t j = 0; j < idx.size(); ++j)
        std::memmove(chip_.dram_data() + SPYRE_OPERAND(in, "dram") +
                         idx[j] * SPYRE_OPERAND(in, "dram_stride"),
                     lx_bytes_ + SPYRE_OPERAND(in, "lx") +
                         static_cast<int64_t>(j) * SPYRE_OPERAND(in, "lx_stride"),
                     static_cast<size_t>(SPYRE_OPERAND(in, "bytes")));
      return;
    }
    case Opcode::RingReduce: {
      uint8_t* dst = chip_.core(static_cast<int>(SPYRE_OPERAND(in, "dst_core"))).lx_bytes() +
                     SPYRE_OPERAND(in, "dst");
      const uint8_t* src = lx_bytes_ + SPYRE_OPERAND(in, "src");
      for (int64_t e = 0; e < SPYRE_OPERAND(in, "bytes") / 4; ++e) {
        float x, y;
        std::memcpy(&x, src + 4 * e, 4);
        std::memcpy(&y, dst + 4 * e, 4);
        y += x;
        std::memcpy(dst + 4 * e, &y, 4);
      }
      return;
    }
    case Opcode::RingSend: {
      std::memmove(chip_.core(static_cast<int>(SPYRE_OPERAND(in, "dst_core"))).lx_bytes() +
                       SPYRE_OPERAND(in, "dst"),
                   lx_bytes_ + SPYRE_OPERAND(in, "src"),
                   static_cast<size_t>(SPYRE_OPERAND(in, "bytes")));
      return;
    }
    case Opcode::PtMatmul: pt_execute(lx_bytes_, in); return;
    default: sfp_execute(lx_bytes_, in); return;
  }
}

void Core::complete(int q) {
  QueueState& s = q_[q];
  const Cycle now = env_.sched.now();
  const isa::Instr& in = s.cur.in;
  if (env_.functional) {
    // The other LX an effect writes gets its bytes here, on the kernel's thread (DMI).
    if (in.op == Opcode::DmaLoad)
      for (int c : mcast_targets(in)) chip_.core(c).functional_lx();
    if (is_ring(in.op)) chip_.core(static_cast<int>(SPYRE_OPERAND(in, "dst_core"))).functional_lx();
    if (env_.data)
      env_.data->submit(this, in);
    else
      execute(in);
  }
  const FlowSrc self = env_.trace ? FlowSrc{s.track, s.start} : FlowSrc{};
  if (is_ring(in.op) && SPYRE_OPERAND(in, "tok") >= 0)
    chip_.core(static_cast<int>(SPYRE_OPERAND(in, "dst_core")))
        .add_token(SPYRE_OPERAND(in, "tok"), self);
  if (in.op == Opcode::DmaLoad && SPYRE_OPERAND(in, "mtok") >= 0)
    for (int c : mcast_targets(in)) chip_.core(c).add_token(SPYRE_OPERAND(in, "mtok"), self);
  s.st.busy_cycles += now - s.start;
  ++s.st.instructions;
  chip_.note_kernel(in.kernel, s.start, now);
  if (env_.trace) trace_instr(q, in, now);
  if (!busy_.empty())  // the counter's value is the busy fraction of each window
    busy_[static_cast<size_t>(q)].add(*env_.activity, now, s.start, now - s.start,
                                      static_cast<double>(now - s.start));
  s.busy = false;
  pump(q);
}

std::vector<int> Core::mcast_targets(const isa::Instr& in) const {
  std::vector<int> out;
  const auto mask = static_cast<uint64_t>(SPYRE_OPERAND(in, "mcast"));
  for (int c = 0; c < 64 && c < static_cast<int>(env_.cfg.cores); ++c)
    if (c != id_ && (mask >> c & 1u)) out.push_back(c);
  return out;
}

std::string Core::stuck_report() const {
  std::string s = "core " + std::to_string(id_) + ": ";
  if (phase_ == Phase::Halted) return s + "halted at cycle " + std::to_string(halt_cycle_);
  if (cursor_.pc < stream_->size()) {
    s += "next instruction #" + std::to_string(cursor_.pc) + " " +
         std::string(isa::op_info(instr(cursor_.pc).op).mnemonic);
    if (!loops_.empty()) s += " (dynamic #" + std::to_string(dyn_) + ")";
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
    case Phase::AtHost: s += " waits for its host call"; break;
    case Phase::Delaying: s += " waits out a sync.delay"; break;
    default: s += " is being decoded"; break;
  }
  int empty = 0;
  for (int q = 0; q < isa::kNumQueues; ++q) {
    const QueueState& st = q_[q];
    const std::string name(isa::queue_name(static_cast<isa::Queue>(q)));
    auto label = [&](const Slot& e) {
      return "#" + std::to_string(e.pc) + " " + std::string(isa::op_info(e.in.op).mnemonic);
    };
    if (st.busy) {
      s += "; queue " + name + " executes instruction " + label(st.cur) + " since cycle " +
           std::to_string(st.start) + " (" + std::to_string(st.entries.size()) + " queued)";
    } else if (st.waiting_tok >= 0) {
      auto it = tokens_.find(st.waiting_tok);
      s += "; queue " + name + " waits on token " + std::to_string(st.waiting_tok) + " (value " +
           std::to_string(it == tokens_.end() ? 0 : it->second) + ") at instruction #" +
           std::to_string(st.entries.front().pc) + " (" + std::to_string(st.entries.size()) +
           " queued)";
    } else if (!st.entries.empty()) {
      s += "; queue " + name + " head instruction " + label(st.entries.front()) + " (" +
           std::to_string(st.entries.size()) + " queued)";
    } else {
      ++empty;
    }
  }
  if (empty == isa::kNumQueues)
    s += "; all queues empty";
  else if (empty > 0)
    s += "; other queues empty";
  return s;
}

}  // namespace spyre::sim
