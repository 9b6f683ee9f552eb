// Hardware loops: structure check, cursor and expansion (semantics in isa.def).
#include "spyre/isa/loops.h"

#include <string>

#include "spyre/error.h"

namespace spyre::isa {

namespace {
constexpr int64_t kMaxLoopCount = int64_t{1} << 32;

std::string at(size_t core, size_t pc, const Instr& in) {
  return "core " + std::to_string(core) + " pc " + std::to_string(pc) + " (" +
         std::string(op_info(in.op).mnemonic) + ")";
}

// Reads the `loop.step` words of the loop at `li` into `per` (increments per target pc).
void read_steps(const std::vector<Instr>& s, size_t core, const LoopInfo& li, uint32_t idx,
                std::vector<std::vector<LoopStepRef>>& per) {
  const auto len = static_cast<int64_t>(li.body_end - li.body_begin);
  for (size_t k = li.header + 1; k < li.body_begin; ++k) {
    const Instr& st = s[k];
    const int64_t i = st.a[0], o = st.a[1];
    if (i < 0 || i >= len)
      throw Error(at(core, k, st), "body word i=" + std::to_string(i) +
                                       " is outside the body [0, " + std::to_string(len) +
                                       ") of the loop at pc " + std::to_string(li.header));
    const size_t target = li.body_begin + static_cast<size_t>(i);
    const Instr& t = s[target];
    const OpInfo& info = op_info(t.op);
    if (is_loop_word(t.op))
      throw Error(at(core, k, st), "body word i=" + std::to_string(i) + " (pc " +
                                       std::to_string(target) + ") is a " +
                                       std::string(info.mnemonic) +
                                       " word; only an instruction's operands can step");
    if (o < 0 || o >= static_cast<int64_t>(info.operands.size()))
      throw Error(at(core, k, st), "operand o=" + std::to_string(o) + " is not an operand of " +
                                       std::string(info.mnemonic) + " at pc " +
                                       std::to_string(target) + " (it has " +
                                       std::to_string(info.operands.size()) + ")");
    if (info.operands[static_cast<size_t>(o)].is_float)
      throw Error(at(core, k, st), "operand o=" + std::to_string(o) + " (" +
                                       info.operands[static_cast<size_t>(o)].name + ") of " +
                                       std::string(info.mnemonic) + " at pc " +
                                       std::to_string(target) +
                                       " is a float; only integer operands step");
    per[target].push_back({idx, static_cast<uint32_t>(o), st.a[2]});
  }
}
}  // namespace

bool is_loop_word(Opcode op) { return op == Opcode::Loop || op == Opcode::LoopStep; }

Instr LoopTable::materialise(const Instr& base, size_t pc, const std::vector<int64_t>& iter) const {
  Instr r = base;
  if (steps.empty()) return r;
  for (uint32_t k = step_begin[pc]; k < step_begin[pc + 1]; ++k)
    r.a[steps[k].operand] += iter[steps[k].loop] * steps[k].delta;
  return r;
}

LoopTable analyse_loops(const std::vector<Instr>& s, size_t core) {
  LoopTable t;
  bool any = false;
  for (const Instr& in : s) any = any || is_loop_word(in.op);
  if (!any) return t;
  const size_t n = s.size();
  t.loop_at.assign(n, -1);
  std::vector<std::vector<LoopStepRef>> per(n);
  std::vector<uint32_t> open;  // enclosing loops of pc, outermost first
  for (size_t pc = 0; pc < n;) {
    while (!open.empty() && pc >= t.loops[open.back()].body_end) open.pop_back();
    const Instr& in = s[pc];
    if (in.op == Opcode::LoopStep)
      throw Error(at(core, pc, in), "loop.step must follow a loop word or another loop.step");
    if ((in.op == Opcode::Barrier || in.op == Opcode::Halt) && !open.empty())
      throw Error(at(core, pc, in), "no barrier or halt may lie in a loop body (loop at pc " +
                                        std::to_string(t.loops[open.back()].header) + ")");
    if (in.op != Opcode::Loop) {
      ++pc;
      continue;
    }
    const int64_t count = in.a[0], len = in.a[1];
    if (count < 1 || count > kMaxLoopCount)
      throw Error(at(core, pc, in), "count=" + std::to_string(count) + " is outside [1, 2^32]");
    if (len < 1) throw Error(at(core, pc, in), "len=" + std::to_string(len) + " must be >= 1");
    if (static_cast<int>(open.size()) >= kMaxLoopDepth)
      throw Error(at(core, pc, in),
                  "loops nest more than " + std::to_string(kMaxLoopDepth) + " deep");
    size_t b = pc + 1;
    while (b < n && s[b].op == Opcode::LoopStep) ++b;
    if (static_cast<uint64_t>(len) > n - b)
      throw Error(at(core, pc, in), "body of len=" + std::to_string(len) + " words from pc " +
                                        std::to_string(b) + " runs past the end of the stream (" +
                                        std::to_string(n) + " words)");
    LoopInfo li{pc, b, b + static_cast<size_t>(len), count, static_cast<int>(open.size())};
    if (!open.empty() && li.body_end > t.loops[open.back()].body_end) {
      const LoopInfo& outer = t.loops[open.back()];
      throw Error(at(core, pc, in), "body ends at pc " + std::to_string(li.body_end) +
                                        ", past the end (pc " + std::to_string(outer.body_end) +
                                        ") of the enclosing loop at pc " +
                                        std::to_string(outer.header) + " (bad nesting)");
    }
    const auto idx = static_cast<uint32_t>(t.loops.size());
    t.loops.push_back(li);
    t.loop_at[pc] = static_cast<int32_t>(idx);
    read_steps(s, core, li, idx, per);
    open.push_back(idx);
    pc = b;
  }
  t.step_begin.assign(n + 1, 0);
  for (size_t pc = 0; pc < n; ++pc) {
    t.step_begin[pc] = static_cast<uint32_t>(t.steps.size());
    t.steps.insert(t.steps.end(), per[pc].begin(), per[pc].end());
  }
  t.step_begin[n] = static_cast<uint32_t>(t.steps.size());
  return t;
}

uint64_t LoopCursor::settle(const std::vector<Instr>& s) {
  if (table->empty()) return 0;
  uint64_t words = 0;
  for (;;) {
    if (!stack.empty() && pc == table->loops[stack.back()].body_end) {
      const LoopInfo& l = table->loops[stack.back()];
      if (++iter[stack.back()] < l.count) {
        pc = l.body_begin;  // the back-edge: zero-overhead
      } else {
        stack.pop_back();
      }
      continue;
    }
    if (pc < s.size() && s[pc].op == Opcode::Loop) {
      const auto idx = static_cast<uint32_t>(table->loop_at[pc]);
      const LoopInfo& l = table->loops[idx];
      iter[idx] = 0;
      stack.push_back(idx);
      words += l.words();
      pc = l.body_begin;
      continue;
    }
    return words;
  }
}

LoopCursor::LoopCursor(const LoopTable& t) : table(&t), iter(t.loops.size(), 0) {}

std::vector<Instr> expand_stream(const std::vector<Instr>& s, size_t core) {
  const LoopTable t = analyse_loops(s, core);
  if (t.empty()) return s;
  std::vector<Instr> out;
  out.reserve(static_cast<size_t>(expanded_size(s, core)));
  LoopCursor cur(t);
  for (cur.settle(s); cur.pc < s.size(); ++cur.pc, cur.settle(s))
    out.push_back(t.materialise(s[cur.pc], cur.pc, cur.iter));
  return out;
}

namespace {
uint64_t region_size(const LoopTable& t, const std::vector<Instr>& s, size_t b, size_t e) {
  uint64_t n = 0;
  for (size_t pc = b; pc < e;) {
    if (s[pc].op != Opcode::Loop) {
      ++n;
      ++pc;
      continue;
    }
    const LoopInfo& l = t.loops[static_cast<size_t>(t.loop_at[pc])];
    n += static_cast<uint64_t>(l.count) * region_size(t, s, l.body_begin, l.body_end);
    pc = l.body_end;
  }
  return n;
}
}  // namespace

uint64_t expanded_size(const std::vector<Instr>& s, size_t core) {
  const LoopTable t = analyse_loops(s, core);
  if (t.empty()) return s.size();
  return region_size(t, s, 0, s.size());
}

}  // namespace spyre::isa
