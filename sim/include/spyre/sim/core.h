#pragma once
// A core: a sequencer, seven unit queues (isa::Queue), a token table, its LX and two DMA
// engines. Plain C++ driven by the scheduler.
//
// Sequencer: decodes instruction i for issue_cycles, then places it in its queue; when the
//   queue holds queue_depth instructions it stalls until the unit takes one. barrier: waits
//   until every queue is empty and every unit idle, arrives at the chip barrier and decodes
//   the next instruction when the barrier opens. halt (or the end of the stream): waits for
//   the queues to drain, then the core is done.
// Queues: a unit takes its head instruction when idle (the slot frees then) and runs it; the
//   seven queues run concurrently. sync.sig / sync.wait execute in order in their queue and
//   take 0 cycles when satisfied; wait blocks its queue while the token is 0 (counting
//   semaphore; waiting time is counted as wait_cycles, not busy).
// Functional effects (copies, arithmetic) happen when an instruction completes; bounds are
// checked when it starts, in both modes.
// LX banks (lx.h): a pt.mm / sfp.* instruction books its operands' accesses over its closed-form
//   window [start, start + cycles) and ends at the booking's end (>= start + cycles); ring.send
//   and ring.red book the source read over [enter, enter + D) on this core and the write (ring.red:
//   read and write) over [arrival - D, arrival) on the receiver, and end at the later of the two.
// Hardware loops (isa.def, isa/loops.h): the sequencer walks the stream with a LoopCursor; each
//   instruction it places carries its static pc, its dynamic index (position in the expanded
//   stream) and its operands for the current iterations. Entering a loop costs
//   loop_issue_cycles per loop/loop.step word on top of the next instruction's issue_cycles;
//   back-edges cost nothing, so with loop_issue_cycles = 0 a looped stream times exactly as its
//   expansion.
// Deadlock report: for the sequencer its next instruction and phase, for every non-empty or
//   busy queue its head: the executing instruction, or the sync.wait and its token.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spyre/arch/unit_timing.h"
#include "spyre/isa/loops.h"
#include "spyre/sim/dma.h"
#include "spyre/sim/env.h"
#include "spyre/sim/lx.h"

namespace spyre::sim {

class Chip;

// A producer span for trace flows: the track and start cycle of the instruction whose
// completion a token publishes (track < 0: none).
struct FlowSrc {
  int track = -1;
  Cycle t = 0;
};

struct QueueStats {
  uint64_t busy_cycles = 0;   // executing instructions
  uint64_t wait_cycles = 0;   // blocked on a token at sync.wait
  uint64_t instructions = 0;  // executed, sync ops included
};

class Core {
 public:
  // Its memory and LX ports come from chip.ports().
  Core(Env& env, Chip& chip, int id);
  void start();  // the sequencer begins at cycle now (0); a core without a stream halts at once
  bool halted() const { return phase_ == Phase::Halted; }
  Cycle halt_cycle() const { return halt_cycle_; }
  void add_token(int64_t tok, FlowSrc src = {});  // a signal arrives now
  void release_barrier();                         // the chip barrier opened now
  std::string stuck_report() const;
  Lx& lx() { return lx_; }
  const Lx& lx() const { return lx_; }
  const QueueStats& queue_stats(int q) const { return q_[q].st; }
  uint64_t full_stall_cycles() const { return full_stall_cycles_; }
  uint64_t issued() const { return dyn_; }             // instructions placed (dynamic count)
  uint64_t loop_words() const { return loop_words_; }  // loop/loop.step words decoded
  void finish_trace();  // flushes the units' busy counters at the end of a traced run
  // This core's LX bytes in a functional run: taken on the kernel's thread (DMI, which
  // allocates the LX on first use) at start() for a program core, before the first effect that
  // writes them for another (a multicast target, a ring destination); lx_bytes() then reads
  // them on any thread (null until then, and in timing-only runs).
  uint8_t* functional_lx() {
    if (!lx_bytes_) lx_bytes_ = lx_data();
    return lx_bytes_;
  }
  uint8_t* lx_bytes() const { return lx_bytes_; }
  // The DataWorker's effect (data_worker.h): `core`'s data effects of `in`.
  static void run_effect(void* core, const isa::Instr& in) {
    static_cast<Core*>(core)->execute(in);
  }

 private:
  enum class Phase { Decoding, StallFull, WaitDrain, AtBarrier, AtHost, Delaying, Halted };
  // An instruction on its way through a queue: its static pc, its dynamic index and iteration
  // of the innermost loop around it (-1: none), and its operands in this iteration.
  struct Slot {
    size_t pc = 0;
    uint64_t dyn = 0;
    int64_t iter = -1;
    isa::Instr in;
  };
  struct QueueState {
    std::deque<Slot> entries;  // in order
    bool busy = false;         // a unit instruction is executing
    Slot cur;                  // that instruction
    Cycle start = 0;
    int64_t waiting_tok = -1;  // head is a sync.wait blocked on this token
    Cycle wait_since = 0;
    bool pump_pending = false;
    QueueStats st;
    arch::PtPipe pt_pipe;  // a PT queue's array: its last pt.mm (unit_timing.h)
    int track = -1;
    // tracing only: the last completed instruction's start, and flows into the next launch
    bool has_last = false;
    Cycle last_start = 0;
    std::vector<FlowSrc> flows_in;
  };

  const isa::Instr& instr(size_t i) const { return (*stream_)[i]; }
  InstrRef ref(const Slot& e) const { return InstrRef{id_, e.pc, &e.in}; }
  bool drained() const;
  // Whether the queues are empty at `now`; if not, the sequencer waits for them (WaitDrain),
  // else a wait that ended now is traced as "drain".
  bool drained_at(Cycle now);
  // sequencer
  void decoded();
  void try_place();
  void advance();  // past the instruction at pc: settle the loops, decode the next one
  void kick_sequencer();
  // units
  void wake(int q);
  void pump(int q);
  void launch(int q, Slot e);
  void complete(int q);
  void check_bounds(const Slot& e) const;
  // The data effects of `in` (functional runs): on the DataWorker's thread when there is one,
  // so it touches only bytes (this core's, others' LX through lx_bytes(), the DRAM image).
  void execute(const isa::Instr& in);
  void launch_ring(int q);
  LxRegions lx_regions(const isa::Instr& in) const;
  std::vector<int> mcast_targets(const isa::Instr& in) const;
  // tracing (core_trace.cpp); called only when env_.trace (full detail) is set
  void trace_instr(int q, const isa::Instr& in, Cycle now);
  void trace_seq(const char* what, Cycle from, Cycle to);
  void loop_args(std::vector<traces::Arg>& out, uint64_t dyn, int64_t iter) const;
  std::vector<traces::LxAccess> lx_accesses(const isa::Instr& in) const;
  std::string_view kernel_name(const isa::Instr& in) const;

  uint8_t* lx_data() const { return units_lx_.data(); }  // this core's LX bytes
  uint8_t* lx_bytes_ = nullptr;

  Env& env_;
  Chip& chip_;
  int id_;
  LxPort& units_lx_;  // PT and SFP operands
  const std::vector<isa::Instr>* stream_;
  Lx lx_;
  std::unique_ptr<DmaEngine> dma_in_, dma_out_;
  QueueState q_[isa::kNumQueues];
  // Traced runs: each unit's busy fraction per trace window, counter "<queue> busy" of this
  // core's group (traces/names.h), indexed by queue; empty when not traced.
  std::vector<traces::WindowCounter> busy_;
  std::map<int64_t, int64_t> tokens_;
  Phase phase_ = Phase::Decoding;
  isa::LoopTable loops_;
  isa::LoopCursor cursor_;  // cursor_.pc: the next instruction's static pc
  uint64_t dyn_ = 0;        // its dynamic index
  uint64_t loop_words_ = 0;
  int stall_queue_ = -1;
  Cycle stall_since_ = 0, halt_cycle_ = 0;
  uint64_t full_stall_cycles_ = 0;
  bool seq_pending_ = false;
  int seq_track_ = -1;
  Cycle drain_since_ = 0, barrier_since_ = 0;
  std::map<int64_t, std::deque<FlowSrc>> tok_src_;  // tracing: producers of pending tokens
};

}  // namespace spyre::sim
