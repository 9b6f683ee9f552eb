// Core tracing: instruction spans with structured args (core, pc, kernel, the LX bytes the
// instruction reads and writes) and sequencer spans. Called only when tracing is on, so none
// of this costs anything when it is off.
#include <algorithm>

#include "spyre/sim/chip.h"
#include "spyre/sim/core.h"

namespace spyre::sim {

using isa::Opcode;
using traces::LxAccess;

namespace {
// Adds `rows` rows of `bytes` at base + r*stride.
void add_rows(std::vector<LxAccess>& out, int64_t base, int64_t bytes, int64_t rows, int64_t stride,
              bool write) {
  if (bytes <= 0) return;
  for (int64_t r = 0; r < rows; ++r) out.push_back({base + r * stride, bytes, write});
}

// Sorted, disjoint ranges: reads first, then writes, each by address; touching or overlapping
// ranges of one kind merged. So the list is the exact set of bytes read and the set written.
void normalise(std::vector<LxAccess>& v) {
  std::sort(v.begin(), v.end(), [](const LxAccess& a, const LxAccess& b) {
    return a.write != b.write ? !a.write : a.addr < b.addr;
  });
  std::vector<LxAccess> out;
  for (const LxAccess& x : v) {
    if (!out.empty() && out.back().write == x.write &&
        x.addr <= out.back().addr + out.back().bytes) {
      out.back().bytes = std::max(out.back().bytes, x.addr + x.bytes - out.back().addr);
      continue;
    }
    out.push_back(x);
  }
  v.swap(out);
}
}  // namespace

std::string_view Core::kernel_name(const isa::Instr& in) const {
  return in.kernel < env_.program.kernels.size() ? std::string_view(env_.program.kernels[in.kernel])
                                                 : std::string_view();
}

std::vector<LxAccess> Core::lx_accesses(const isa::Instr& in) const {
  std::vector<LxAccess> out;
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore: {
      const bool load = in.op == Opcode::DmaLoad;
      for (int64_t o = 0; o < SPYRE_OPERAND(in, "outer"); ++o)
        for (int64_t rep = 0; rep < SPYRE_OPERAND(in, "reps"); ++rep)
          add_rows(out,
                   SPYRE_OPERAND(in, "lx") + o * SPYRE_OPERAND(in, "lx_outer") +
                       rep * SPYRE_OPERAND(in, "lx_rep"),
                   SPYRE_OPERAND(in, "bytes"), SPYRE_OPERAND(in, "rows"),
                   SPYRE_OPERAND(in, "lx_stride"), load);
      break;
    }
    case Opcode::DmaGather:
    case Opcode::DmaScatter: {  // the index vector is read; the rows written (gather) or read
      const int64_t isz = SPYRE_OPERAND(in, "idt") == static_cast<int64_t>(isa::DType::I32) ? 4 : 8;
      add_rows(out, SPYRE_OPERAND(in, "idx"), SPYRE_OPERAND(in, "n") * isz, 1, 0, false);
      add_rows(out, SPYRE_OPERAND(in, "lx"), SPYRE_OPERAND(in, "bytes"), SPYRE_OPERAND(in, "n"),
               SPYRE_OPERAND(in, "lx_stride"), in.op == Opcode::DmaGather);
      break;
    }
    case Opcode::RingSend:
    case Opcode::RingReduce:  // this core's source; the write lands in dst_core's LX
      add_rows(out, SPYRE_OPERAND(in, "src"), SPYRE_OPERAND(in, "bytes"), 1, 0, false);
      break;
    case Opcode::PtMatmul: {
      const LxRegions r = lx_regions(in);  // A, B, C
      for (size_t k = 0; k < r.size(); ++k) {
        const bool c = k == 2;
        add_rows(out, r[k].base, r[k].row_bytes, r[k].rows, r[k].row_stride, c);
        if (c && (SPYRE_OPERAND(in, "flags") & 1))  // accumulate: C is read too
          add_rows(out, r[k].base, r[k].row_bytes, r[k].rows, r[k].row_stride, false);
      }
      break;
    }
    default: {
      if (isa::op_info(in.op).unit != isa::Unit::Sfp) break;
      // lx_regions lists the operands present in the order dst, a, b, c; every SFP op has dst.
      const LxRegions r = lx_regions(in);
      for (size_t k = 0; k < r.size(); ++k)
        add_rows(out, r[k].base, r[k].row_bytes, r[k].rows, r[k].row_stride, k == 0);
      if (in.op == Opcode::SfpReduce && SPYRE_OPERAND(in, "acc") && !r.empty())
        add_rows(out, r[0].base, r[0].row_bytes, r[0].rows, r[0].row_stride, false);
      break;
    }
  }
  normalise(out);
  return out;
}

void Core::trace_instr(int q, const isa::Instr& in, Cycle now) {
  QueueState& s = q_[q];
  const std::vector<LxAccess> lx = lx_accesses(in);
  const std::string detail = operand_summary(in);
  std::vector<traces::Arg> extra;
  if (in.op == Opcode::RingSend || in.op == Opcode::RingReduce)
    extra.push_back(traces::Arg::num("dst_core", SPYRE_OPERAND(in, "dst_core")));
  loop_args(extra, s.cur.dyn, s.cur.iter);
  traces::SpanArgs a;
  a.kernel = kernel_name(in);
  a.core = id_;
  a.pc = static_cast<int64_t>(s.cur.pc);
  a.detail = detail;
  a.lx = lx.empty() ? nullptr : &lx;
  a.extra = extra.empty() ? nullptr : &extra;
  env_.trace->span(s.track, isa::op_info(in.op).mnemonic, s.start, now - s.start, a);
  s.has_last = true;
  s.last_start = s.start;
}

// With loops, spans add "dyn" (the dynamic index: position in the expanded stream, which the LX
// plan's live intervals count) and, inside a loop, "iter" (the innermost loop's iteration); a
// stream without loops adds neither, since there dyn == pc.
void Core::loop_args(std::vector<traces::Arg>& out, uint64_t dyn, int64_t iter) const {
  if (loops_.empty()) return;
  out.push_back(traces::Arg::num("dyn", static_cast<int64_t>(dyn)));
  if (iter >= 0) out.push_back(traces::Arg::num("iter", iter));
}

void Core::trace_seq(const char* what, Cycle from, Cycle to) {
  traces::SpanArgs a;
  a.core = id_;
  a.pc = static_cast<int64_t>(cursor_.pc);
  if (cursor_.pc < stream_->size()) a.kernel = kernel_name(instr(cursor_.pc));
  std::vector<traces::Arg> extra;
  loop_args(extra, dyn_, -1);
  a.extra = extra.empty() ? nullptr : &extra;
  std::string name = what;
  if (name == "stall")
    name += " " + std::string(isa::queue_name(static_cast<isa::Queue>(stall_queue_)));
  env_.trace->span(seq_track_, name, from, to - from, a);
}

}  // namespace spyre::sim
