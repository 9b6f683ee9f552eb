#pragma once
// The instruction set: opcodes, operands and programs. Everything here is derived from
// isa.def and sfp_fn.def; see those tables for the meaning of each instruction.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spyre/isa/dtype.h"

namespace spyre::isa {

enum class Opcode : uint16_t {
#define SPYRE_INSN(ident, mnem, unit, ops, desc) ident,
#include "spyre/isa/isa.def"
#undef SPYRE_INSN
};

enum class SfpFn : uint8_t {
#define SPYRE_SFP_FN(ident, name, arity, cls) ident,
#include "spyre/isa/sfp_fn.def"
#undef SPYRE_SFP_FN
};

// Which unit of a core executes an instruction. Seq instructions carry their own queue.
enum class Unit : uint8_t { DmaIn, DmaOut, Pt, Sfp, Ring, Seq };
enum class SfpClass : uint8_t { Simple, Transcendental, Compare, Reduce };

// Per-core queues. PT and SFP have one queue per corelet.
enum class Queue : uint8_t {
  DmaIn = 0,
  DmaOut = 1,
  Pt0 = 2,
  Pt1 = 3,
  Sfp0 = 4,
  Sfp1 = 5,
  Ring = 6
};
constexpr int kNumQueues = 7;
std::string_view queue_name(Queue q);  // "dma_in", "dma_out", "pt0", ...

constexpr int kMaxOperands = 16;

struct OperandSpec {
  std::string name;
  bool required = true;
  bool is_float = false;
  int64_t default_value = 0;
};

struct OpInfo {
  Opcode op;
  std::string_view mnemonic;
  Unit unit;
  std::string_view description;
  std::vector<OperandSpec> operands;
  int index_of(std::string_view operand) const;  // -1 when absent
};

int num_opcodes();
const OpInfo& op_info(Opcode op);
const OpInfo* find_op(std::string_view mnemonic);  // nullptr when unknown
bool opcode_valid(int64_t code);

struct SfpFnInfo {
  SfpFn fn;
  std::string_view name;
  int arity;  // 0 for reductions
  SfpClass cls;
};
int num_sfp_fns();
const SfpFnInfo& sfp_fn_info(SfpFn fn);
const SfpFnInfo* find_sfp_fn(std::string_view name);
bool sfp_fn_valid(int64_t code);

// Operands read by a name known at compile time: `SPYRE_OPERAND(in, "lx")` is `in.get("lx")`
// (the same value, the same spyre::Error when in's opcode has no such operand) at the cost of
// one table load, where get() looks the name up. The table, one slot per opcode, is computed
// from isa.def's operand lists by the compiler; a name no opcode has does not compile.
struct Instr;
namespace detail {
inline constexpr std::string_view kOperandLists[] = {
#define SPYRE_INSN(ident, mnem, unit, ops, desc) ops,
#include "spyre/isa/isa.def"
#undef SPYRE_INSN
};
inline constexpr size_t kOpcodes = sizeof(kOperandLists) / sizeof(kOperandLists[0]);

// The position of `name` in an isa.def operand list (`name`, `name=default`, `name:f`,
// separated by spaces), -1 when absent.
constexpr int operand_position(std::string_view list, std::string_view name) {
  int index = 0;
  size_t p = 0;
  while (p < list.size()) {
    while (p < list.size() && list[p] == ' ') ++p;
    if (p == list.size()) break;
    size_t e = p;
    while (e < list.size() && list[e] != ' ' && list[e] != '=' && list[e] != ':') ++e;
    if (list.substr(p, e - p) == name) return index;
    while (e < list.size() && list[e] != ' ') ++e;
    p = e;
    ++index;
  }
  return -1;
}

struct OperandSlots {
  std::string_view name;
  int8_t at[kOpcodes] = {};  // per opcode: the operand's index, -1 when it has none
  bool any = false;          // some opcode has it
};

constexpr OperandSlots operand_slots(std::string_view name) {
  OperandSlots s{};
  s.name = name;
  for (size_t i = 0; i < kOpcodes; ++i) {
    s.at[i] = static_cast<int8_t>(operand_position(kOperandLists[i], name));
    s.any = s.any || s.at[i] >= 0;
  }
  return s;
}

[[noreturn]] void missing_operand(const Instr& in, std::string_view name);
}  // namespace detail

#define SPYRE_OPERAND(in, name)                                              \
  ((in).operand([]() -> const ::spyre::isa::detail::OperandSlots& {          \
    static constexpr ::spyre::isa::detail::OperandSlots kSlots =             \
        ::spyre::isa::detail::operand_slots(name);                           \
    static_assert(kSlots.any, "no instruction of isa.def has this operand"); \
    return kSlots;                                                           \
  }()))

// One instruction: opcode, the kernel it belongs to (for attribution) and its operands in
// the order of the table. Unused operand slots are zero.
struct Instr {
  Opcode op = Opcode::Halt;
  uint16_t kernel = 0;
  std::array<int64_t, kMaxOperands> a{};

  int64_t get(std::string_view operand) const;  // throws spyre::Error when absent
  double get_float(std::string_view operand) const;
  // The operand of `slots` (SPYRE_OPERAND); throws as get() does when absent.
  int64_t operand(const detail::OperandSlots& slots) const {
    const int i = slots.at[static_cast<size_t>(op)];
    if (i < 0) detail::missing_operand(*this, slots.name);
    return a[static_cast<size_t>(i)];
  }
  bool operator==(const Instr& o) const { return op == o.op && kernel == o.kernel && a == o.a; }
};

// Builds an instruction from named operands; unnamed ones take their defaults.
// Throws spyre::Error naming the mnemonic and operand on an unknown or missing operand.
Instr make_instr(Opcode op, std::initializer_list<std::pair<std::string_view, int64_t>> ops,
                 uint16_t kernel = 0);
// The same from an operand list built at run time.
Instr make_instr(Opcode op, const std::vector<std::pair<std::string_view, int64_t>>& ops,
                 uint16_t kernel = 0);
int64_t float_operand(double v);  // the bit pattern carried by a `:f` operand
double operand_float(int64_t bits);

// The queue an instruction goes to (for Seq instructions, its `q` operand; barrier and halt
// are handled by the sequencer itself and return Queue::DmaIn unused).
Queue queue_of(const Instr& in);

// A named tensor in device memory: where a program expects its inputs and leaves outputs.
struct TensorSym {
  std::string name;
  std::string role;  // "input", "output", "parameter", "scratch"
  DType dtype = DType::F16;
  std::vector<int64_t> size;
  std::vector<int64_t> stride;  // elements
  uint64_t dram_addr = 0;
  uint64_t bytes = 0;  // storage span
  bool operator==(const TensorSym& o) const {
    return name == o.name && role == o.role && dtype == o.dtype && size == o.size &&
           stride == o.stride && dram_addr == o.dram_addr && bytes == o.bytes;
  }
};

struct DataSegment {  // initial DRAM contents (constants)
  uint64_t dram_addr = 0;
  std::vector<uint8_t> bytes;
  bool operator==(const DataSegment& o) const {
    return dram_addr == o.dram_addr && bytes == o.bytes;
  }
};

struct Program {
  static constexpr uint32_t kVersion = 1;
  uint32_t num_cores = 0;
  uint64_t dram_bytes = 0;           // device memory the program uses
  std::vector<std::string> kernels;  // kernel id -> name
  std::vector<std::vector<Instr>> cores;
  std::vector<TensorSym> tensors;
  std::vector<DataSegment> data;
  bool operator==(const Program& o) const {
    return num_cores == o.num_cores && dram_bytes == o.dram_bytes && kernels == o.kernels &&
           cores == o.cores && tensors == o.tensors && data == o.data;
  }
  size_t num_instructions() const;
};

// Bytes that elements of `dt` at sizes/strides (elements) span from the first: 0 when a size is
// 0, else ceil((1 + sum (size-1) * stride) * bits / 8). Throws spyre::Error naming `where` for a
// negative size or stride, a missing stride or a span beyond 64 bits.
uint64_t storage_span_bytes(DType dt, const std::vector<int64_t>& size,
                            const std::vector<int64_t>& stride, const std::string& where);

// Checks operands against the table (valid opcodes, sfp fns, dtypes, queues, cores, kernel
// ids), and that tensors and data segments lie in the program's device memory (one stride per
// size, their span within their bytes). Throws spyre::Error naming core, index and instruction,
// or the tensor or segment.
void validate(const Program& p);

}  // namespace spyre::isa
