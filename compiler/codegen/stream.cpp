#include "spyre/compiler/stream.h"

namespace spyre::compiler {
namespace {
bool any_overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x.overlaps(y)) return true;
  return false;
}
}  // namespace

bool Access::conflicts(const Access& later) const {
  return any_overlap(lx_write, later.lx_read) || any_overlap(lx_read, later.lx_write) ||
         any_overlap(lx_write, later.lx_write) || any_overlap(dram_write, later.dram_read) ||
         any_overlap(dram_read, later.dram_write) || any_overlap(dram_write, later.dram_write);
}

void CoreStream::emit(const isa::Instr& in, Access acc) {
  if (!covered_init_) {
    for (auto& row : covered_) row.fill(-1);
    covered_init_ = true;
  }
  const isa::Queue q = isa::queue_of(in);
  const auto qi = static_cast<size_t>(q);
  Entry e{in, {}, {}};
  for (size_t p = 0; p < per_queue_.size(); ++p) {
    if (p == qi) continue;
    auto& list = per_queue_[p];
    for (int64_t i = static_cast<int64_t>(list.size()) - 1; i > covered_[p][qi]; --i) {
      if (!list[static_cast<size_t>(i)].acc.conflicts(acc)) continue;
      entries_[list[static_cast<size_t>(i)].entry].sig_to.push_back(q);
      e.wait_from.push_back(static_cast<isa::Queue>(p));
      covered_[p][qi] = i;
      break;
    }
  }
  per_queue_[qi].push_back(Issued{entries_.size(), std::move(acc)});
  entries_.push_back(std::move(e));
}

void CoreStream::flush() {
  for (const auto& e : entries_) {
    const isa::Queue q = isa::queue_of(e.in);
    for (auto from : e.wait_from)
      out_.push_back(isa::make_instr(isa::Opcode::Wait,
                                     {{"q", static_cast<int64_t>(q)}, {"tok", token_of(from, q)}},
                                     e.in.kernel));
    out_.push_back(e.in);
    for (auto to : e.sig_to)
      out_.push_back(isa::make_instr(isa::Opcode::Signal,
                                     {{"q", static_cast<int64_t>(q)}, {"tok", token_of(q, to)}},
                                     e.in.kernel));
  }
  entries_.clear();
  for (auto& l : per_queue_) l.clear();
  for (auto& row : covered_) row.fill(-1);
  covered_init_ = true;
}

void CoreStream::barrier(uint16_t kernel) {
  flush();
  out_.push_back(isa::make_instr(isa::Opcode::Barrier, {}, kernel));
}

void CoreStream::halt(uint16_t kernel) {
  flush();
  out_.push_back(isa::make_instr(isa::Opcode::Halt, {}, kernel));
}

}  // namespace spyre::compiler
