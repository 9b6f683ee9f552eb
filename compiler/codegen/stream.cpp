#include "spyre/compiler/stream.h"

#include <algorithm>
#include <iterator>

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

namespace {
ByteRange hull(const std::vector<ByteRange>& rs) {
  ByteRange h;
  for (const ByteRange& r : rs) {
    if (r.lo >= r.hi) continue;  // empty: overlaps nothing
    if (h.lo >= h.hi) {
      h = r;
    } else {
      h.lo = std::min(h.lo, r.lo);
      h.hi = std::max(h.hi, r.hi);
    }
  }
  return h;
}
}  // namespace

CoreStream::Hulls::Hulls(const Access& a)
    : lx_read(hull(a.lx_read)),
      lx_write(hull(a.lx_write)),
      dram_read(hull(a.dram_read)),
      dram_write(hull(a.dram_write)) {}

void CoreStream::emit(const isa::Instr& in, Access acc) {
  if (!covered_init_) {
    for (auto& row : covered_) row.fill(-1);
    covered_init_ = true;
  }
  const isa::Queue q = isa::queue_of(in);
  const auto qi = static_cast<size_t>(q);
  constexpr size_t kQ = isa::kNumQueues;
  // For each other queue, the latest conflicting instruction not yet ordered before q.
  std::array<int64_t, kQ> need;
  need.fill(-1);
  const Hulls hulls(acc);
  for (size_t p = 0; p < kQ; ++p) {
    if (p == qi) continue;
    const auto& list = per_queue_[p];
    for (int64_t i = static_cast<int64_t>(list.size()) - 1; i > covered_[p][qi]; --i) {
      const Issued& earlier = list[static_cast<size_t>(i)];
      if (earlier.hulls.may_conflict(hulls) && earlier.acc.conflicts(acc)) {
        need[p] = i;
        break;
      }
    }
  }
  // A wait on p is implied when the instruction waited on in another queue p2 was itself
  // ordered after p's needed instruction (Issued::after is transitively closed).
  Entry e{in, {}, {}};
  for (size_t p = 0; p < kQ; ++p) {
    if (need[p] < 0) continue;
    bool implied = false;
    for (size_t p2 = 0; p2 < kQ && !implied; ++p2)
      implied = p2 != p && need[p2] >= 0 &&
                per_queue_[p2][static_cast<size_t>(need[p2])].after[p] >= need[p];
    if (implied) continue;
    entries_[per_queue_[p][static_cast<size_t>(need[p])].entry].sig_to.push_back(q);
    e.wait_from.push_back(static_cast<isa::Queue>(p));
  }
  // q is now ordered after every needed instruction and after what those were ordered after.
  for (size_t p = 0; p < kQ; ++p) {
    if (need[p] < 0) continue;
    covered_[p][qi] = std::max(covered_[p][qi], need[p]);
    const Cover& via = per_queue_[p][static_cast<size_t>(need[p])].after;
    for (size_t r = 0; r < kQ; ++r)
      if (r != qi) covered_[r][qi] = std::max(covered_[r][qi], via[r]);
  }
  Cover after;
  for (size_t r = 0; r < kQ; ++r) after[r] = covered_[r][qi];
  after[qi] = static_cast<int64_t>(per_queue_[qi].size()) - 1;  // its own queue: in order
  per_queue_[qi].push_back(Issued{entries_.size(), std::move(acc), hulls, after});
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

std::vector<isa::Instr> CoreStream::kernel_instrs(uint16_t kernel) const {
  auto first = out_.end();  // the flushed ones: the tail of out_ with this kernel
  while (first != out_.begin() && std::prev(first)->kernel == kernel) --first;
  size_t pending = 0;
  for (const auto& e : entries_) pending += e.in.kernel == kernel;
  std::vector<isa::Instr> out;
  out.reserve(static_cast<size_t>(out_.end() - first) + pending);
  out.assign(first, out_.end());
  for (const auto& e : entries_)
    if (e.in.kernel == kernel) out.push_back(e.in);
  return out;
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
