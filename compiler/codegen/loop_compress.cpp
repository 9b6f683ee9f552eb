// Hardware-loop compression (loop_compress.h): a greedy search for repeated blocks whose
// operands advance by a constant step, folded into `loop` + `loop.step` words.
#include "spyre/compiler/loop_compress.h"

#include <algorithm>
#include <limits>

#include "spyre/isa/loops.h"

namespace spyre::compiler {
namespace {

using isa::Instr;
using isa::Opcode;
constexpr size_t kNone = std::numeric_limits<size_t>::max();
constexpr size_t kOps = isa::kMaxOperands;
constexpr uint64_t kBase = 1000003;

struct OpShape {
  size_t nops = 0;
  uint32_t float_mask = 0;  // operands that may not step
};

const std::vector<OpShape>& shapes() {
  static const std::vector<OpShape> s = [] {
    std::vector<OpShape> v(static_cast<size_t>(isa::num_opcodes()));
    for (size_t op = 0; op < v.size(); ++op) {
      const auto& info = isa::op_info(static_cast<Opcode>(op));
      v[op].nops = info.operands.size();
      for (size_t o = 0; o < info.operands.size(); ++o)
        if (info.operands[o].is_float) v[op].float_mask |= 1u << o;
    }
    return v;
  }();
  return s;
}

bool is_fence(Opcode op) { return op == Opcode::Barrier || op == Opcode::Halt; }

struct Cand {
  size_t len = 0;  // body words
  int64_t count = 0;
  int64_t save = 0;  // words saved
};

// One pass over a stream whose top-level items are plain instructions or whole loops.
class Pass {
 public:
  Pass(const std::vector<Instr>& s, int64_t max_period) : s_(s), max_period_(max_period) {
    const size_t n = s.size();
    item_.assign(n, 0);
    height_.assign(n, 0);
    next_.assign(n, kNone);
    fences_.assign(n + 1, 0);
    key_.resize(n);
    // Prefix hashes of what must be equal between repetitions (opcode, kernel, loop words'
    // operands), so a candidate block is rejected in O(1) before any word is compared.
    hash_.assign(n + 1, 0);
    for (size_t x = 0; x < n; ++x) {
      const Instr& in = s[x];
      key_[x] = static_cast<uint32_t>(in.op) << 16 | in.kernel;
      fences_[x + 1] = fences_[x] + (is_fence(in.op) ? 1 : 0);
      uint64_t h = key_[x] + 1;
      if (isa::is_loop_word(in.op))
        for (size_t o = 0; o < 3; ++o)
          h = h * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(in.a[o]);
      hash_[x + 1] = hash_[x] * kBase + h;
    }
    pow_.assign(static_cast<size_t>(max_period) + 1, 1);
    for (size_t k = 1; k < pow_.size(); ++k) pow_[k] = pow_[k - 1] * kBase;
    next_loop_.assign(n + 1, kNone);
    for (size_t pc = 0; pc < n;) {
      const auto [end, h] = scan_item(pc);
      item_[pc] = static_cast<uint32_t>(end - pc);
      height_[pc] = static_cast<uint8_t>(h);
      starts_.push_back(pc);
      pc = end;
    }
    for (size_t x = n; x-- > 0;) next_loop_[x] = height_[x] > 0 ? x : next_loop_[x + 1];
    // next_: the next item start with the same opcode and kernel (a block can only repeat
    // there); kernels numbered from the stretch's lowest, so the table stays small.
    uint32_t kmin = 0xffff, kmax = 0;
    for (size_t x : starts_) {
      kmin = std::min<uint32_t>(kmin, key_[x] & 0xffff);
      kmax = std::max<uint32_t>(kmax, key_[x] & 0xffff);
    }
    const size_t kinds = starts_.empty() ? 0 : kmax - kmin + 1;
    auto slot = [&](size_t x) { return (key_[x] >> 16) * kinds + (key_[x] & 0xffff) - kmin; };
    std::vector<size_t> last(shapes().size() * kinds, kNone);
    for (size_t k = starts_.size(); k-- > 0;) {
      const size_t x = starts_[k];
      next_[x] = last[slot(x)];
      last[slot(x)] = x;
    }
  }

  // Folds what it can; returns false (and leaves `out` alone) when nothing folds.
  bool run(uint64_t& loops, std::vector<Instr>& out) {
    size_t copied = 0;        // words before this are in `out` (kept empty until the first fold)
    size_t ahead_at = kNone;  // choose() of the item after i, kept for the next step
    Cand ahead;
    for (size_t i = 0; i < s_.size();) {
      const Cand c = ahead_at == i ? ahead : choose(i);
      // One item of lookahead: a fold that starts one item later and saves more wins (a run
      // of equal waits after a different one is one loop, not a short odd loop and the rest).
      const size_t j = i + item_[i];
      if (c.count >= 2 && j < s_.size()) {
        ahead = choose(j);
        ahead_at = j;
      }
      if (c.count < 2 || (ahead_at == j && ahead.save > c.save)) {
        i = j;
        continue;
      }
      if (copied == 0) out.clear();
      out.insert(out.end(), s_.begin() + static_cast<std::ptrdiff_t>(copied),
                 s_.begin() + static_cast<std::ptrdiff_t>(i));
      find(i, c.len, s_.size(), &deltas_);  // the chosen candidate's steps
      emit(out, i, c);
      ++loops;
      i += c.len * static_cast<size_t>(c.count);
      copied = i;
    }
    if (copied == 0) return false;
    out.insert(out.end(), s_.begin() + static_cast<std::ptrdiff_t>(copied), s_.end());
    return true;
  }

 private:
  // The end of the item at pc (an instruction, or a loop with its steps and body: the streams
  // here were made by earlier passes, so well formed) and the loop levels inside it.
  std::pair<size_t, int> scan_item(size_t pc) const {
    if (s_[pc].op != Opcode::Loop) return {pc + 1, 0};
    size_t b = pc + 1;
    while (s_[b].op == Opcode::LoopStep) ++b;
    const size_t end = b + static_cast<size_t>(s_[pc].a[1]);
    int h = 0;
    for (size_t x = b; x < end;) {
      const auto [e, hx] = scan_item(x);
      h = std::max(h, hx);
      x = e;
    }
    return {end, h + 1};
  }

  uint64_t block_hash(size_t i, size_t len) const { return hash_[i + len] - hash_[i] * pow_[len]; }

  // Steps between the block at i and the block at j (both `len` words): false when they
  // differ in anything but integer operands of plain instructions.
  bool steps_of(size_t i, size_t j, size_t len, std::vector<int64_t>& d) {
    for (size_t k = 0; k < len; ++k)  // cheap test first (a hash collision fails here)
      if (key_[i + k] != key_[j + k]) return false;
    d.assign(len * kOps, 0);
    nsteps_ = 0;
    for (size_t k = 0; k < len; ++k) {
      const Instr& a = s_[i + k];
      const Instr& b = s_[j + k];
      const OpShape& sh = shapes()[static_cast<size_t>(a.op)];
      if (isa::is_loop_word(a.op)) {
        if (a.a != b.a) return false;
        continue;
      }
      for (size_t o = 0; o < sh.nops; ++o) {
        const __int128 diff = static_cast<__int128>(b.a[o]) - a.a[o];
        if (diff == 0) continue;
        if ((sh.float_mask >> o & 1u) || diff > std::numeric_limits<int64_t>::max() ||
            diff < std::numeric_limits<int64_t>::min())
          return false;
        d[k * kOps + o] = static_cast<int64_t>(diff);
        ++nsteps_;
      }
    }
    return true;
  }

  // Whether the block at j is the block at i advanced m steps.
  bool repeats(size_t i, size_t j, size_t len, const std::vector<int64_t>& d, int64_t m) const {
    for (size_t k = 0; k < len; ++k) {
      const Instr& a = s_[i + k];
      const Instr& b = s_[j + k];
      if (a.op != b.op || a.kernel != b.kernel) return false;
      const size_t nops = shapes()[static_cast<size_t>(a.op)].nops;
      for (size_t o = 0; o < nops; ++o)
        if (static_cast<__int128>(a.a[o]) + static_cast<__int128>(m) * d[k * kOps + o] != b.a[o])
          return false;
    }
    return true;
  }

  // The best fold starting at item i with a body of at most max_len words, all repetitions
  // inside [i, limit). With `want`, exactly the body of `max_len` words and its steps.
  Cand find(size_t i, size_t max_len, size_t limit, std::vector<int64_t>* want = nullptr) {
    Cand best;
    int height = 0;
    size_t loop_at = next_loop_[i];  // the next loop item not yet counted in `height`
    for (size_t j = next_[i]; j != kNone && j - i <= max_len; j = next_[j]) {
      const size_t len = j - i;
      if (i + 2 * len > limit || fences_[j] != fences_[i]) break;
      for (; loop_at < j; loop_at = next_loop_[loop_at + 1])
        height = std::max<int>(height, height_[loop_at]);
      if (height + 1 > isa::kMaxLoopDepth) break;
      if (want && len != max_len) continue;
      if (block_hash(i, len) != block_hash(j, len) || !steps_of(i, j, len, tmp_)) continue;
      int64_t count = 2;
      while (i + static_cast<size_t>(count + 1) * len <= limit &&
             repeats(i, i + static_cast<size_t>(count) * len, len, tmp_, count))
        ++count;
      const auto nsteps = static_cast<int64_t>(nsteps_);
      const int64_t save =
          static_cast<int64_t>(len) * count - (1 + nsteps + static_cast<int64_t>(len));
      if (want) {
        *want = tmp_;
        return {len, count, save};
      }
      if (save > best.save) best = {len, count, save};
    }
    return best;
  }

  Cand choose(size_t i) {
    const Cand c = find(i, static_cast<size_t>(max_period_), s_.size());
    return c.save > 0 ? c : Cand{};
  }

  void emit(std::vector<Instr>& out, size_t i, const Cand& c) const {
    const uint16_t kernel = s_[i].kernel;
    out.push_back(isa::make_instr(
        Opcode::Loop, {{"count", c.count}, {"len", static_cast<int64_t>(c.len)}}, kernel));
    for (size_t k = 0; k < c.len; ++k)
      for (size_t o = 0; o < kOps; ++o)
        if (int64_t d = deltas_[k * kOps + o])
          out.push_back(isa::make_instr(
              Opcode::LoopStep,
              {{"i", static_cast<int64_t>(k)}, {"o", static_cast<int64_t>(o)}, {"delta", d}},
              kernel));
    out.insert(out.end(), s_.begin() + static_cast<std::ptrdiff_t>(i),
               s_.begin() + static_cast<std::ptrdiff_t>(i + c.len));
  }

  const std::vector<Instr>& s_;
  int64_t max_period_;
  std::vector<uint32_t> item_;    // per item start: its words
  std::vector<uint8_t> height_;   // per item start: loop levels inside it (0: an instruction)
  std::vector<size_t> next_;      // per item start: the next item start with its opcode
  std::vector<uint32_t> fences_;  // barriers and halts before each word
  std::vector<size_t> starts_;
  std::vector<int64_t> tmp_, deltas_;
  std::vector<uint64_t> hash_, pow_;  // prefix hashes mod 2^64, powers of kBase
  std::vector<uint32_t> key_;         // per word: opcode << 16 | kernel
  std::vector<size_t> next_loop_;     // per word (+1): the first loop item at or after it
  size_t nsteps_ = 0;                 // nonzero steps found by the last steps_of
};

}  // namespace

std::vector<Instr> compress_loops(const std::vector<Instr>& stream, const LoopCompressOptions& opts,
                                  LoopCompressStats* stats) {
  std::vector<Instr> out, seg, next;
  out.reserve(stream.size() / 2);
  uint64_t loops = 0;
  // No loop crosses a barrier or halt, so each stretch between them (one kernel on this core)
  // is compressed on its own: small, cache-resident, and done once nothing more can fold.
  for (size_t b = 0; b < stream.size();) {
    size_t e = b;
    while (e < stream.size() && !is_fence(stream[e].op)) ++e;
    seg.assign(stream.begin() + static_cast<std::ptrdiff_t>(b),
               stream.begin() + static_cast<std::ptrdiff_t>(e));
    // Innermost first: pass k folds bodies of at most 8 * 2^k words. A repetition with a
    // longer period needs two copies, more than the cap, so any body a pass folds holds only
    // repetitions of periods at most half its cap, which earlier passes have folded already.
    for (int64_t cap = 8;; cap *= 2) {
      const uint64_t before = loops;
      if (seg.size() >= 2 && Pass(seg, std::min(cap, opts.max_period)).run(loops, next))
        seg.swap(next);
      // Past half the stretch a bigger cap finds nothing new unless this pass folded something.
      const bool covers = cap * 2 >= static_cast<int64_t>(seg.size());
      if (cap >= opts.max_period || (covers && loops == before)) break;
    }
    out.insert(out.end(), seg.begin(), seg.end());
    if (e < stream.size()) out.push_back(stream[e]);
    b = e + 1;
  }
  if (stats) {
    stats->words_before += stream.size();
    stats->words_after += out.size();
    stats->loops += loops;
  }
  return out;
}

}  // namespace spyre::compiler
