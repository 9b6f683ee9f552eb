#pragma once
// Per-core instruction streams with automatic synchronisation.
//
// Lowering emits instructions in a sequentially correct order, each with the LX and DRAM byte
// ranges it reads and writes. The stream orders every instruction after each earlier one of
// ANOTHER queue that it conflicts with (read-after-write, write-after-read, write-after-write)
// by inserting `sync.sig q=P tok=T` right after the producer in P and `sync.wait q=Q tok=T`
// right before the consumer in Q. One token per ordered queue pair, T = P*7 + Q: queues are
// in order, so the i-th wait on T in Q is released by the i-th signal on T from P, and every
// signal has exactly one wait (tokens are zero again at each barrier). Because a signal always
// precedes its wait in stream order, the sequencer never deadlocks on a full queue.
// Same-queue conflicts need nothing: a queue executes its instructions one after another.
// Ordering is transitive: once Q waited for P's instruction i, Q is also after everything P
// itself had waited for before i, so a wait that such a chain already implies is not emitted.
#include <array>
#include <cstdint>
#include <vector>

#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct ByteRange {
  int64_t lo = 0, hi = 0;  // [lo, hi)
  bool overlaps(const ByteRange& o) const {
    return lo < o.hi && o.lo < hi && lo < hi && o.lo < o.hi;
  }
};

struct Access {
  std::vector<ByteRange> lx_read, lx_write, dram_read, dram_write;
  bool conflicts(const Access& later) const;
};

class CoreStream {
 public:
  static int token_of(isa::Queue from, isa::Queue to) {
    return static_cast<int>(from) * isa::kNumQueues + static_cast<int>(to);
  }
  void emit(const isa::Instr& in, Access acc);
  // barrier / halt end the current kernel: every queue drains, hazards are forgotten.
  void barrier(uint16_t kernel);
  void halt(uint16_t kernel);
  const std::vector<isa::Instr>& instrs() const { return out_; }
  // Every instruction of kernel `kernel` emitted so far: flushed ones with their tokens, those
  // still pending (a kernel boundary without a barrier does not flush) without (cost estimates).
  std::vector<isa::Instr> kernel_instrs(uint16_t kernel) const;
  // Instructions of the kernel in progress, without tokens (for cost estimates).
  size_t pending() const { return entries_.size(); }

 private:
  struct Entry {
    isa::Instr in;
    std::vector<isa::Queue> wait_from;  // waits emitted before `in`
    std::vector<isa::Queue> sig_to;     // signals emitted after `in`
  };
  using Cover = std::array<int64_t, isa::kNumQueues>;
  // The hull of each kind of an Access's non-empty ranges: two accesses whose hulls do not
  // overlap cannot conflict, which most pairs emit() looks at show without a range loop.
  struct Hulls {
    ByteRange lx_read, lx_write, dram_read, dram_write;
    explicit Hulls(const Access& a);
    bool may_conflict(const Hulls& l) const {
      return lx_write.overlaps(l.lx_read) || lx_read.overlaps(l.lx_write) ||
             lx_write.overlaps(l.lx_write) || dram_write.overlaps(l.dram_read) ||
             dram_read.overlaps(l.dram_write) || dram_write.overlaps(l.dram_write);
    }
  };
  struct Issued {
    size_t entry;
    Access acc;
    Hulls hulls;
    Cover after;  // per queue r: index in per_queue_[r] this instruction is ordered after
  };
  void flush();
  std::vector<Entry> entries_;
  std::array<std::vector<Issued>, isa::kNumQueues> per_queue_{};
  // covered_[p][q]: index in per_queue_[p] up to which q is already ordered after p.
  std::array<Cover, isa::kNumQueues> covered_{};
  bool covered_init_ = false;
  std::vector<isa::Instr> out_;
};

}  // namespace spyre::compiler
