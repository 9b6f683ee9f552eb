#include "spyre/isa/isa.h"
#include <array>

#include <cstring>
#include <sstream>

#include "spyre/error.h"
#include "spyre/isa/loops.h"

namespace spyre::isa {

namespace {

std::vector<OperandSpec> parse_operands(std::string_view spec) {
  std::vector<OperandSpec> out;
  std::istringstream in{std::string(spec)};
  std::string tok;
  while (in >> tok) {
    OperandSpec o;
    if (auto eq = tok.find('='); eq != std::string::npos) {
      o.name = tok.substr(0, eq);
      o.required = false;
      o.default_value = std::stoll(tok.substr(eq + 1));
    } else if (auto colon = tok.find(':'); colon != std::string::npos) {
      o.name = tok.substr(0, colon);
      o.is_float = true;
    } else {
      o.name = tok;
    }
    out.push_back(o);
  }
  return out;
}

std::vector<OpInfo> build_table() {
  std::vector<OpInfo> t;
#define SPYRE_INSN(ident, mnem, unit, ops, desc) \
  t.push_back(OpInfo{Opcode::ident, mnem, Unit::unit, desc, parse_operands(ops)});
#include "spyre/isa/isa.def"
#undef SPYRE_INSN
  return t;
}

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> t = build_table();
  return t;
}

constexpr SfpFnInfo kSfpFns[] = {
#define SPYRE_SFP_FN(ident, name, arity, cls) {SfpFn::ident, name, arity, SfpClass::cls},
#include "spyre/isa/sfp_fn.def"
#undef SPYRE_SFP_FN
};

}  // namespace

std::string_view queue_name(Queue q) {
  static constexpr std::string_view names[kNumQueues] = {"dma_in", "dma_out", "pt0", "pt1",
                                                         "sfp0",   "sfp1",    "ring"};
  return names[static_cast<int>(q)];
}

// The length and first letter rule out almost every other operand before a string compare.
int OpInfo::index_of(std::string_view operand) const {
  if (operand.empty()) return -1;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string_view n = operands[i].name;
    if (n.size() == operand.size() && n[0] == operand[0] && n == operand)
      return static_cast<int>(i);
  }
  return -1;
}

int num_opcodes() { return static_cast<int>(table().size()); }
bool opcode_valid(int64_t code) { return code >= 0 && code < num_opcodes(); }
const OpInfo& op_info(Opcode op) { return table()[static_cast<size_t>(op)]; }
const OpInfo* find_op(std::string_view mnemonic) {
  for (const auto& i : table())
    if (i.mnemonic == mnemonic) return &i;
  return nullptr;
}

int num_sfp_fns() { return static_cast<int>(std::size(kSfpFns)); }
bool sfp_fn_valid(int64_t code) { return code >= 0 && code < num_sfp_fns(); }
const SfpFnInfo& sfp_fn_info(SfpFn fn) { return kSfpFns[static_cast<size_t>(fn)]; }
const SfpFnInfo* find_sfp_fn(std::string_view name) {
  for (const auto& f : kSfpFns)
    if (f.name == name) return &f;
  return nullptr;
}

// The simulator reads operands by name on every instruction, nearly always with a string
// literal: a small per-thread table remembers where (opcode, name pointer, length) was found.
// A hit is checked against the operand's name, so a reused pointer can never give a wrong
// index; a miss falls back to the search.
int64_t Instr::get(std::string_view operand) const {
  // Callers name operands by literals, mostly: a memo by the name's address and the opcode,
  // confirmed against the table's name (the same address may hold another name later).
  struct Slot {
    const char* p = nullptr;
    size_t n = 0;
    int op = -1, index = -1;
    const char* name = nullptr;  // the table's name, n characters
  };
  static thread_local std::array<Slot, 1024> memo;
  const auto key = reinterpret_cast<uintptr_t>(operand.data());
  Slot& m = memo[((key >> 2) ^ (key >> 12) ^ (static_cast<uintptr_t>(op) * 0x9e37u)) & 1023u];
  if (m.p == operand.data() && m.n == operand.size() && m.op == static_cast<int>(op)) {
    size_t j = 0;  // names are a few characters: a loop, not a call
    while (j < m.n && m.name[j] == operand[j]) ++j;
    if (j == m.n) return a[static_cast<size_t>(m.index)];
  }
  const OpInfo& info = op_info(op);
  const int i = info.index_of(operand);
  if (i < 0)
    throw Error(std::string(info.mnemonic), "has no operand '" + std::string(operand) + "'");
  m = Slot{operand.data(), operand.size(), static_cast<int>(op), i,
           info.operands[static_cast<size_t>(i)].name.data()};
  return a[static_cast<size_t>(i)];
}

double Instr::get_float(std::string_view operand) const { return operand_float(get(operand)); }

void detail::missing_operand(const Instr& in, std::string_view name) {
  throw Error(std::string(op_info(in.op).mnemonic), "has no operand '" + std::string(name) + "'");
}

int64_t float_operand(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, 8);
  return bits;
}
double operand_float(int64_t bits) {
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

namespace {
using NamedOperand = std::pair<std::string_view, int64_t>;

Instr build_instr(Opcode op, const NamedOperand* first, const NamedOperand* last, uint16_t kernel) {
  static_assert(kMaxOperands <= 32, "the operands set below is a 32-bit mask");
  const OpInfo& info = op_info(op);
  const size_t count = info.operands.size();
  Instr in;
  in.op = op;
  in.kernel = kernel;
  uint32_t set = 0;
  for (size_t i = 0; i < count; ++i) in.a[i] = info.operands[i].default_value;
  // Callers mostly name the operands in the table's order: the one after the last found is
  // tried first (names are unique, so this finds what index_of would).
  size_t next = 0;
  for (const NamedOperand* p = first; p != last; ++p) {
    const auto& [name, value] = *p;
    int i = -1;
    if (next < count && info.operands[next].name == name)
      i = static_cast<int>(next);
    else
      i = info.index_of(name);
    if (i < 0)
      throw Error(std::string(info.mnemonic), "unknown operand '" + std::string(name) + "'");
    in.a[static_cast<size_t>(i)] = value;
    set |= 1u << i;
    next = static_cast<size_t>(i) + 1;
  }
  for (size_t i = 0; i < count; ++i)
    if (info.operands[i].required && !(set >> i & 1u))
      throw Error(std::string(info.mnemonic), "missing operand '" + info.operands[i].name + "'");
  return in;
}
}  // namespace

Instr make_instr(Opcode op, std::initializer_list<std::pair<std::string_view, int64_t>> ops,
                 uint16_t kernel) {
  return build_instr(op, ops.begin(), ops.end(), kernel);
}

Instr make_instr(Opcode op, const std::vector<std::pair<std::string_view, int64_t>>& ops,
                 uint16_t kernel) {
  return build_instr(op, ops.data(), ops.data() + ops.size(), kernel);
}

Queue queue_of(const Instr& in) {
  switch (op_info(in.op).unit) {
    case Unit::DmaIn: return Queue::DmaIn;
    case Unit::DmaOut: return Queue::DmaOut;
    case Unit::Pt: return in.a[0] ? Queue::Pt1 : Queue::Pt0;
    case Unit::Sfp: return in.a[0] ? Queue::Sfp1 : Queue::Sfp0;
    case Unit::Ring: return Queue::Ring;
    case Unit::Seq:
      if (in.op == Opcode::Signal || in.op == Opcode::Wait) return static_cast<Queue>(in.a[0]);
      return Queue::DmaIn;
  }
  return Queue::DmaIn;
}

size_t Program::num_instructions() const {
  size_t n = 0;
  for (const auto& c : cores) n += c.size();
  return n;
}

namespace {
// I4 (two elements per byte, spyre/isa/dtype.h) is taken by pt.mm (dt) and sfp.cvt (sdt or
// ddt) only; its row strides must be even so that every row starts on a byte (the LX timing
// model and DMA work in whole bytes).
template <typename Where>
void check_i4(const Instr& in, const OpInfo& info, const Where& where) {
  auto is_i4 = [&](const char* name) {
    return info.index_of(name) >= 0 && in.get(name) == static_cast<int64_t>(DType::I4);
  };
  auto even = [&](const std::string& name, const char* why) {
    if (in.get(name) % 2 != 0)
      throw Error(where(), "operand " + name + "=" + std::to_string(in.get(name)) +
                               " must be even for dtype i4 (two elements per byte): " + why);
  };
  if (in.op == Opcode::PtMatmul) {
    if (!is_i4("dt")) return;
    even("lda", "each row of A starts on a byte");
    even("ldb", "each row of B starts on a byte");
  } else if (in.op == Opcode::SfpConvert) {
    if (is_i4("sdt")) even("a_rs", "each row of a starts on a byte");
    if (is_i4("ddt")) even("dst_rs", "each row of dst starts on a byte");
  } else if (is_i4("dt")) {
    throw Error(where(),
                "dtype i4 (4-bit, two elements per byte) is supported only by pt.mm "
                "and sfp.cvt; convert to i8 or a float type first");
  }
}

// The operand ranges every instruction that has the operand must keep, by opcode: looked up
// once per opcode, not by name per instruction.
struct RangeCheck {
  int index;
  int64_t lo, hi;
  std::string_view name;
};
const std::vector<RangeCheck>& range_checks(Opcode op) {
  static const std::vector<std::vector<RangeCheck>> table = [] {
    constexpr int64_t kBig = int64_t{1} << 40;
    const std::pair<std::string_view, std::pair<int64_t, int64_t>> ranges[] = {
        {"cl", {0, 1}},
        {"dt", {0, kNumDTypes - 1}},
        {"sdt", {0, kNumDTypes - 1}},
        {"ddt", {0, kNumDTypes - 1}},
        {"rows", {0, kBig}},
        {"cols", {0, kBig}},
        {"bytes", {0, kBig}},
        {"reps", {0, kBig}},
        {"m", {0, kBig}},
        {"n", {0, kBig}},
        {"k", {0, kBig}},
        {"flags", {0, 3}},
        {"acc", {0, 1}},
        {"in_bytes", {0, kBig}},
        {"out_bytes", {0, kBig}},
        {"cycles", {0, kBig}}};
    std::vector<std::vector<RangeCheck>> t(static_cast<size_t>(num_opcodes()));
    for (int o = 0; o < num_opcodes(); ++o) {
      const OpInfo& info = op_info(static_cast<Opcode>(o));
      for (const auto& [name, r] : ranges) {
        const int i = info.index_of(name);
        if (i >= 0) t[static_cast<size_t>(o)].push_back({i, r.first, r.second, name});
      }
    }
    return t;
  }();
  return table[static_cast<size_t>(op)];
}

void check_instr(const Program& p, size_t core, size_t idx, const Instr& in) {
  auto where = [&] {
    return "core " + std::to_string(core) + " instruction " + std::to_string(idx) + " (" +
           std::string(op_info(in.op).mnemonic) + ")";
  };
  if (in.kernel >= p.kernels.size() && !p.kernels.empty())
    throw Error(where(), "kernel id " + std::to_string(in.kernel) + " is not declared");
  const OpInfo& info = op_info(in.op);
  auto fail = [&](std::string_view name, int64_t v, int64_t lo, int64_t hi) {
    throw Error(where(), "operand " + std::string(name) + "=" + std::to_string(v) +
                             " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "]");
  };
  auto need = [&](std::string_view name, int64_t lo, int64_t hi) {
    int i = info.index_of(name);
    if (i < 0) return;
    int64_t v = in.a[static_cast<size_t>(i)];
    if (v < lo || v > hi) fail(name, v, lo, hi);
  };
  for (const RangeCheck& r : range_checks(in.op)) {
    const int64_t v = in.a[static_cast<size_t>(r.index)];
    if (v < r.lo || v > r.hi) fail(r.name, v, r.lo, r.hi);
  }
  check_i4(in, info, where);
  if (in.op == Opcode::Signal || in.op == Opcode::Wait) need("q", 0, kNumQueues - 1);
  if (in.op == Opcode::Signal) need("core", -1, static_cast<int64_t>(p.num_cores) - 1);
  if (in.op == Opcode::RingSend) need("dst_core", 0, static_cast<int64_t>(p.num_cores) - 1);
  if (info.unit == Unit::Sfp && info.index_of("fn") >= 0) {
    int64_t fn = in.get("fn");
    if (!sfp_fn_valid(fn)) throw Error(where(), "unknown SFP function code " + std::to_string(fn));
    const auto& f = sfp_fn_info(static_cast<SfpFn>(fn));
    bool want_reduce = in.op == Opcode::SfpReduce;
    int want_arity = in.op == Opcode::SfpUnary ? 1 : 2;
    if (want_reduce ? f.cls != SfpClass::Reduce : f.arity != want_arity)
      throw Error(where(), "SFP function '" + std::string(f.name) + "' does not fit " +
                               std::string(info.mnemonic));
  }
}
// An operand stepped by loops is linear in each loop's iteration, so its extremes are at the
// corners: every instruction is checked with each stepped operand at its lowest and highest.
void check_stepped(const Program& p, size_t core, const LoopTable& t) {
  if (t.empty()) return;
  const std::vector<Instr>& s = p.cores[core];
  for (size_t pc = 0; pc < s.size(); ++pc) {
    if (t.step_begin[pc] == t.step_begin[pc + 1]) continue;
    Instr lo = s[pc], hi = s[pc];
    for (uint32_t k = t.step_begin[pc]; k < t.step_begin[pc + 1]; ++k) {
      const LoopStepRef& st = t.steps[k];
      const __int128 span = static_cast<__int128>(t.loops[st.loop].count - 1) * st.delta;
      const __int128 v =
          static_cast<__int128>(span < 0 ? lo.a[st.operand] : hi.a[st.operand]) + span;
      if (v > INT64_MAX || v < INT64_MIN)
        throw Error("core " + std::to_string(core) + " pc " + std::to_string(pc),
                    "operand " + std::to_string(st.operand) + " stepped by the loop at pc " +
                        std::to_string(t.loops[st.loop].header) + " overflows 64 bits");
      (span < 0 ? lo : hi).a[st.operand] = static_cast<int64_t>(v);
    }
    for (const Instr* in : {&lo, &hi}) {
      try {
        check_instr(p, core, pc, *in);
      } catch (const Error& e) {
        throw Error(e.what(), "in an iteration of its loops");
      }
    }
  }
}
}  // namespace

uint64_t storage_span_bytes(DType dt, const std::vector<int64_t>& size,
                            const std::vector<int64_t>& stride, const std::string& where) {
  unsigned __int128 elems = 1;  // 1 + sum (size - 1) * stride, exact for any int64 operands
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) return 0;
    if (size[i] < 0 || i >= stride.size() || stride[i] < 0)
      throw Error(where, "expected non-negative sizes and one stride per size");
    elems += static_cast<unsigned __int128>(size[i] - 1) * static_cast<uint64_t>(stride[i]);
    if (elems > (static_cast<unsigned __int128>(1) << 64))
      throw Error(where, "spans more elements than 64 bits count");
  }
  const unsigned __int128 bytes = (elems * static_cast<unsigned>(dtype_bits(dt)) + 7) / 8;
  if (bytes > UINT64_MAX) throw Error(where, "spans more bytes than 64 bits count");
  return static_cast<uint64_t>(bytes);
}

void validate(const Program& p) {
  if (p.num_cores == 0) throw Error("program", "num_cores must be at least 1");
  if (p.cores.size() != p.num_cores)
    throw Error("program", "has " + std::to_string(p.cores.size()) + " core streams for " +
                               std::to_string(p.num_cores) + " cores");
  for (size_t c = 0; c < p.cores.size(); ++c) {
    for (size_t i = 0; i < p.cores[c].size(); ++i) check_instr(p, c, i, p.cores[c][i]);
    check_stepped(p, c, analyse_loops(p.cores[c], c));
  }
  // Ranges compared without sums that could wrap: a file may hold any 64-bit value.
  auto inside = [&](uint64_t addr, uint64_t bytes) {
    return bytes <= p.dram_bytes && addr <= p.dram_bytes - bytes;
  };
  // Names are single tokens of the assembly (format.h): no whitespace, no comment character.
  auto check_name = [](const std::string& name, const std::string& what) {
    if (name.empty() || name.find_first_of(" \t\n\v\f\r;#") != std::string::npos)
      throw Error(what + " '" + name + "'",
                  "expected a non-empty name without whitespace, ';' or '#'");
  };
  for (const auto& k : p.kernels) check_name(k, "kernel name");
  for (const auto& t : p.tensors) {
    check_name(t.name, "tensor name");
    check_name(t.role, "tensor " + t.name + " role");
    const std::string where = "tensor " + t.name;
    if (t.size.size() != t.stride.size())
      throw Error(where, "has " + std::to_string(t.size.size()) + " sizes but " +
                             std::to_string(t.stride.size()) + " strides");
    for (size_t i = 0; i < t.size.size(); ++i)
      if (t.size[i] < 0 || t.stride[i] < 0)
        throw Error(where, "dimension " + std::to_string(i) + " has a negative size or stride");
    if (!inside(t.dram_addr, t.bytes))
      throw Error(where, "lies outside the program's device memory");
    const uint64_t span = storage_span_bytes(t.dtype, t.size, t.stride, where);
    if (span > t.bytes)
      throw Error(where, "its sizes and strides span " + std::to_string(span) +
                             " bytes, more than its " + std::to_string(t.bytes));
    if (t.dtype == DType::I4 && span > 0) {  // whole bytes: an even element span
      int64_t elems = 1;
      for (size_t i = 0; i < t.size.size(); ++i) elems += (t.size[i] - 1) * t.stride[i];
      if (elems % 2 != 0)
        throw Error(where, "of dtype i4 spans " + std::to_string(elems) +
                               " elements; i4 packs two per byte, so the span must be even");
    }
  }
  for (const auto& d : p.data)
    if (!inside(d.dram_addr, d.bytes.size()))
      throw Error("data segment at " + std::to_string(d.dram_addr),
                  "lies outside the program's device memory");
}

}  // namespace spyre::isa
