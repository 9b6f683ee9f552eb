// Text assembly: one directive or instruction per line, operands as name=value.
//   .spyre 1 | .cores N | .dram_bytes N | .kernel ID NAME
//   .tensor NAME ROLE DTYPE size=a,b stride=a,b addr=N bytes=N | .data ADDR HEX
//   .core N | .k ID (kernel of the following instructions) | mnemonic name=value ...
// Comments start with ';' or '#'. `fn` takes an SFP function name, dtype operands a dtype name.
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/isa/format.h"
#include "spyre/isa/loops.h"

namespace spyre::isa {

namespace {

bool is_dtype_operand(std::string_view n) { return n == "dt" || n == "sdt" || n == "ddt"; }

// A float operand spelled by its IEEE-754 double bits, `bits:0x7ff8000000000001` (how the
// disassembler writes a NaN, keeping its sign and payload).
constexpr const char* kFloatBits = "bits:0x";

std::string fmt_operand(const OperandSpec& spec, int64_t v) {
  if (spec.is_float) {
    char buf[64];
    // %.17g gives every number back exactly; a NaN's sign and payload only through its bits.
    if (std::isnan(operand_float(v)))
      std::snprintf(buf, sizeof buf, "%s%016llx", kFloatBits,
                    static_cast<unsigned long long>(static_cast<uint64_t>(v)));
    else
      std::snprintf(buf, sizeof buf, "%.17g", operand_float(v));
    return buf;
  }
  if (spec.name == "fn" && sfp_fn_valid(v))
    return std::string(sfp_fn_info(static_cast<SfpFn>(v)).name);
  if (is_dtype_operand(spec.name) && dtype_valid(v))
    return std::string(dtype_name(static_cast<DType>(v)));
  if (spec.name == "q" && v >= 0 && v < kNumQueues)
    return std::string(queue_name(static_cast<Queue>(v)));
  return std::to_string(v);
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

std::string disassemble(const Program& p) {
  std::ostringstream o;
  o << ".spyre " << Program::kVersion << "\n.cores " << p.num_cores << "\n.dram_bytes "
    << p.dram_bytes << "\n";
  for (size_t k = 0; k < p.kernels.size(); ++k) o << ".kernel " << k << " " << p.kernels[k] << "\n";
  for (const auto& t : p.tensors)
    o << ".tensor " << t.name << " " << t.role << " " << dtype_name(t.dtype)
      << " size=" << join(t.size) << " stride=" << join(t.stride) << " addr=" << t.dram_addr
      << " bytes=" << t.bytes << "\n";
  for (const auto& d : p.data) {
    o << ".data " << d.dram_addr << " ";
    static const char* hex = "0123456789abcdef";
    for (uint8_t b : d.bytes) o << hex[b >> 4] << hex[b & 15];
    o << "\n";
  }
  for (size_t c = 0; c < p.cores.size(); ++c) {
    o << "\n.core " << c << "\n";
    int cur_kernel = -1;
    const std::vector<Instr>& s = p.cores[c];
    LoopTable loops;
    try {
      loops = analyse_loops(s, c);
    } catch (const Error&) {  // a malformed loop is still printed, just not annotated
    }
    std::vector<size_t> ends;        // body ends of the loops around pc: the indentation
    const LoopInfo* head = nullptr;  // the latest loop word, whose steps follow it
    for (size_t pc = 0; pc < s.size(); ++pc) {
      const Instr& in = s[pc];
      while (!ends.empty() && pc >= ends.back()) ends.pop_back();
      if (in.kernel != cur_kernel) {
        o << ".k " << in.kernel << "\n";
        cur_kernel = in.kernel;
      }
      const OpInfo& info = op_info(in.op);
      o << std::string(2 + 2 * ends.size(), ' ') << info.mnemonic;
      for (size_t i = 0; i < info.operands.size(); ++i)
        o << " " << info.operands[i].name << "=" << fmt_operand(info.operands[i], in.a[i]);
      if (!loops.empty() && loops.loop_at[pc] >= 0) {
        head = &loops.loops[static_cast<size_t>(loops.loop_at[pc])];
        ends.push_back(head->body_end);
      } else if (in.op == Opcode::LoopStep && head) {
        // Steps name their target as "body word i, operand o": say which, for the reader.
        const OpInfo& ti = op_info(s[head->body_begin + static_cast<size_t>(in.a[0])].op);
        o << "  ; " << ti.mnemonic << "." << ti.operands[static_cast<size_t>(in.a[1])].name;
      }
      o << "\n";
    }
  }
  return o.str();
}

namespace {

class Assembler {
 public:
  Assembler(const std::string& file) : file_(file) {}

  Program run(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      ++lineno_;
      if (auto c = line.find_first_of(";#"); c != std::string::npos) line.resize(c);
      std::istringstream ls(line);
      std::vector<std::string> tok;
      for (std::string t; ls >> t;) tok.push_back(t);
      if (tok.empty()) continue;
      if (tok[0][0] == '.')
        directive(tok);
      else
        instruction(tok);
    }
    if (!saw_header_) fail("missing '.spyre 1' header");
    p_.cores.resize(p_.num_cores);
    try {
      validate(p_);
    } catch (const Error& e) {
      throw Error(file_, e.what());
    }
    return std::move(p_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(file_ + ":" + std::to_string(lineno_), msg);
  }
  int64_t integer(const std::string& s, const std::string& what) const {
    try {
      size_t used = 0;
      int64_t v = std::stoll(s, &used, 0);
      if (used != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      fail("expected an integer for " + what + ", got '" + s + "'");
    }
  }
  // Addresses and byte counts are unsigned 64-bit in the binary format: all of them, no sign.
  uint64_t unsigned_integer(const std::string& s, const std::string& what) const {
    try {
      size_t used = 0;
      if (s.empty() || s[0] == '-' || s[0] == '+') throw std::invalid_argument(s);
      uint64_t v = std::stoull(s, &used, 0);
      if (used != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      fail("expected an unsigned integer for " + what + ", got '" + s + "'");
    }
  }
  std::vector<int64_t> int_list(const std::string& s, const std::string& what) const {
    std::vector<int64_t> v;
    std::istringstream in(s);
    for (std::string t; std::getline(in, t, ',');)
      if (!t.empty()) v.push_back(integer(t, what));
    return v;
  }
  std::pair<std::string, std::string> kv(const std::string& t) const {
    auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) fail("expected name=value, got '" + t + "'");
    return {t.substr(0, eq), t.substr(eq + 1)};
  }
  void need_args(const std::vector<std::string>& tok, size_t n) const {
    if (tok.size() != n) fail(tok[0] + " expects " + std::to_string(n - 1) + " arguments");
  }

  void directive(const std::vector<std::string>& tok) {
    const std::string& d = tok[0];
    if (d == ".spyre") {
      need_args(tok, 2);
      if (integer(tok[1], "version") != Program::kVersion)
        fail("assembly version " + tok[1] + ", this build reads " +
             std::to_string(Program::kVersion));
      saw_header_ = true;
    } else if (d == ".cores") {
      need_args(tok, 2);
      auto n = integer(tok[1], "core count");
      if (n < 1 || n > 4096) fail("core count must be in [1, 4096]");
      if (!p_.cores.empty()) fail(".cores may appear once, before any .core");
      p_.num_cores = static_cast<uint32_t>(n);
      p_.cores.resize(p_.num_cores);
    } else if (d == ".dram_bytes") {
      need_args(tok, 2);
      p_.dram_bytes = unsigned_integer(tok[1], "dram_bytes");
    } else if (d == ".kernel") {
      need_args(tok, 3);
      auto id = integer(tok[1], "kernel id");
      if (id != static_cast<int64_t>(p_.kernels.size()))
        fail("kernel ids must be declared in order, expected " + std::to_string(p_.kernels.size()));
      p_.kernels.push_back(tok[2]);
    } else if (d == ".tensor") {
      if (tok.size() < 4) fail(".tensor expects NAME ROLE DTYPE and fields");
      TensorSym t;
      t.name = tok[1];
      t.role = tok[2];
      try {
        t.dtype = dtype_from_name(tok[3]);
      } catch (const Error& e) {
        fail(e.what());
      }
      for (size_t i = 4; i < tok.size(); ++i) {
        auto [k, v] = kv(tok[i]);
        if (k == "size")
          t.size = int_list(v, "size");
        else if (k == "stride")
          t.stride = int_list(v, "stride");
        else if (k == "addr")
          t.dram_addr = unsigned_integer(v, "addr");
        else if (k == "bytes")
          t.bytes = unsigned_integer(v, "bytes");
        else
          fail("unknown .tensor field '" + k + "'");
      }
      p_.tensors.push_back(std::move(t));
    } else if (d == ".data") {
      need_args(tok, 3);
      DataSegment s;
      s.dram_addr = unsigned_integer(tok[1], "data address");
      const std::string& h = tok[2];
      if (h.size() % 2) fail(".data hex has an odd number of digits");
      if (h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        fail(".data expects hex digits, got '" + h + "'");
      for (size_t i = 0; i < h.size(); i += 2)
        s.bytes.push_back(static_cast<uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
      p_.data.push_back(std::move(s));
    } else if (d == ".core") {
      need_args(tok, 2);
      auto c = integer(tok[1], "core");
      if (c < 0 || c >= static_cast<int64_t>(p_.num_cores))
        fail("core " + tok[1] + " outside .cores " + std::to_string(p_.num_cores));
      core_ = static_cast<int>(c);
      kernel_ = 0;
    } else if (d == ".k") {
      need_args(tok, 2);
      auto k = integer(tok[1], "kernel id");
      // As validate: with no .kernel at all, ids only attribute instructions (any 16-bit id).
      if (k < 0 || k > 0xffff ||
          (!p_.kernels.empty() && k >= static_cast<int64_t>(p_.kernels.size())))
        fail("kernel " + tok[1] + " is not declared with .kernel");
      kernel_ = static_cast<uint16_t>(k);
    } else {
      fail("unknown directive '" + d + "'");
    }
  }

  int64_t operand_value(const OperandSpec& spec, const std::string& v) const {
    if (spec.is_float) {
      char* end = nullptr;
      const std::string_view prefix = kFloatBits;
      if (v.rfind(prefix, 0) == 0) {
        const std::string hex = v.substr(prefix.size());
        bool digits = !hex.empty() && hex.size() <= 16;
        for (char ch : hex) digits = digits && std::isxdigit(static_cast<unsigned char>(ch));
        if (!digits)
          fail("expected " + spec.name + "=bits:0x followed by up to 16 hex digits, got '" + v +
               "'");
        return static_cast<int64_t>(std::strtoull(hex.c_str(), nullptr, 16));
      }
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end)
        fail("expected a number for " + spec.name + ", got '" + v + "'");
      return float_operand(d);
    }
    if (spec.name == "fn") {
      if (const auto* f = find_sfp_fn(v)) return static_cast<int64_t>(f->fn);
    } else if (is_dtype_operand(spec.name) && !v.empty() && std::isalpha(v[0])) {
      try {
        return static_cast<int64_t>(dtype_from_name(v));
      } catch (const Error& e) {
        fail(e.what());
      }
    } else if (spec.name == "q") {
      for (int q = 0; q < kNumQueues; ++q)
        if (queue_name(static_cast<Queue>(q)) == v) return q;
    }
    return integer(v, spec.name);
  }

  void instruction(const std::vector<std::string>& tok) {
    if (core_ < 0) fail("instruction before any .core directive");
    const OpInfo* info = find_op(tok[0]);
    if (!info) fail("unknown instruction '" + tok[0] + "'");
    Instr in;
    in.op = info->op;
    in.kernel = kernel_;
    std::vector<bool> set(info->operands.size(), false);
    for (size_t i = 0; i < info->operands.size(); ++i) in.a[i] = info->operands[i].default_value;
    for (size_t i = 1; i < tok.size(); ++i) {
      auto [k, v] = kv(tok[i]);
      int idx = info->index_of(k);
      if (idx < 0) fail(std::string(info->mnemonic) + " has no operand '" + k + "'");
      in.a[static_cast<size_t>(idx)] = operand_value(info->operands[static_cast<size_t>(idx)], v);
      set[static_cast<size_t>(idx)] = true;
    }
    for (size_t i = 0; i < info->operands.size(); ++i)
      if (info->operands[i].required && !set[i])
        fail(std::string(info->mnemonic) + " needs operand '" + info->operands[i].name + "'");
    p_.cores[static_cast<size_t>(core_)].push_back(in);
  }

  std::string file_;
  int lineno_ = 0;
  bool saw_header_ = false;
  int core_ = -1;
  uint16_t kernel_ = 0;
  Program p_;
};

}  // namespace

Program assemble(const std::string& text, const std::string& file) {
  return Assembler(file).run(text);
}

Program load_program(const std::string& path) {
  auto bytes = read_file_bytes(path);
  if (is_binary_program(bytes)) return decode(bytes, path);
  return assemble(std::string(bytes.begin(), bytes.end()), path);
}

void save_program(const Program& p, const std::string& path) {
  auto ends_with = [&](const char* s) {
    std::string e(s);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends_with(".s") || ends_with(".asm")) {
    write_file_atomic(path, disassemble(p));
  } else {
    auto b = encode(p);
    write_file_atomic(path, b.data(), b.size());
  }
}

std::string isa_markdown() {
  std::ostringstream o;
  o << "# spyre-sim ISA (generated from isa/include/spyre/isa/isa.def)\n\n"
    << "| mnemonic | unit | operands | description |\n|---|---|---|---|\n";
  static const char* units[] = {"dma_in", "dma_out", "pt", "sfp", "ring", "sequencer"};
  for (int i = 0; i < num_opcodes(); ++i) {
    const auto& info = op_info(static_cast<Opcode>(i));
    o << "| `" << info.mnemonic << "` | " << units[static_cast<int>(info.unit)] << " | ";
    for (const auto& s : info.operands) {
      o << "`" << s.name;
      if (!s.required) o << "=" << s.default_value;
      if (s.is_float) o << ":f";
      o << "` ";
    }
    o << "| " << info.description << " |\n";
  }
  o << "\n## SFP functions\n\n| name | arity | class |\n|---|---|---|\n";
  static const char* classes[] = {"simple", "transcendental", "compare", "reduce"};
  for (int i = 0; i < num_sfp_fns(); ++i) {
    const auto& f = sfp_fn_info(static_cast<SfpFn>(i));
    o << "| `" << f.name << "` | " << f.arity << " | " << classes[static_cast<int>(f.cls)]
      << " |\n";
  }
  return o.str();
}

}  // namespace spyre::isa
