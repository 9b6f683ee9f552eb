// The binary program format (layout in format.h).
#include <cstring>

#include "spyre/error.h"
#include "spyre/isa/format.h"

namespace spyre::isa {

namespace {
constexpr char kMagic[8] = {'S', 'P', 'Y', 'R', 'E', 'P', 'R', 'G'};
constexpr char kTrailer[8] = {'E', 'N', 'D', 'P', 'R', 'O', 'G', '\0'};

class Writer {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  Reader(const std::vector<uint8_t>& b, const std::string& file) : b_(b), file_(file) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void raw(void* dst, size_t n, const char* what) {
    need(n, what);
    if (n) std::memcpy(dst, b_.data() + pos_, n);  // an empty segment's data() may be null
    pos_ += n;
  }
  std::string str(const char* what) {
    auto n = get<uint32_t>(what);
    need(n, what);  // before allocating: a corrupt length must not allocate gigabytes
    std::string s(n, '\0');
    raw(s.data(), n, what);
    return s;
  }
  // Counts come from the file: bound them by what is left so a corrupt count cannot
  // allocate gigabytes.
  uint64_t count(const char* what, size_t min_item_bytes) {
    auto n = get<uint64_t>(what);
    if (min_item_bytes && n > (b_.size() - pos_) / min_item_bytes)
      fail(std::string(what) + " count " + std::to_string(n) + " exceeds the file size");
    return n;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(file_ + " @byte " + std::to_string(pos_), msg);
  }
  bool at_end() const { return pos_ == b_.size(); }

 private:
  void need(size_t n, const char* what) const {
    if (pos_ + n > b_.size()) fail(std::string("truncated file while reading ") + what);
  }
  const std::vector<uint8_t>& b_;
  std::string file_;
  size_t pos_ = 0;
};
}  // namespace

bool is_binary_program(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kMagic, 8) == 0;
}

std::vector<uint8_t> encode(const Program& p) {
  Writer w;
  w.bytes(kMagic, 8);
  w.put<uint32_t>(Program::kVersion);
  w.put<uint32_t>(p.num_cores);
  w.put<uint64_t>(p.dram_bytes);
  w.put<uint64_t>(p.kernels.size());
  for (const auto& k : p.kernels) w.str(k);
  w.put<uint64_t>(p.tensors.size());
  for (const auto& t : p.tensors) {
    w.str(t.name);
    w.str(t.role);
    w.put<uint8_t>(static_cast<uint8_t>(t.dtype));
    w.put<uint32_t>(static_cast<uint32_t>(t.size.size()));
    for (auto s : t.size) w.put<int64_t>(s);
    for (size_t i = 0; i < t.size.size(); ++i)
      w.put<int64_t>(i < t.stride.size() ? t.stride[i] : 0);
    w.put<uint64_t>(t.dram_addr);
    w.put<uint64_t>(t.bytes);
  }
  w.put<uint64_t>(p.data.size());
  for (const auto& d : p.data) {
    w.put<uint64_t>(d.dram_addr);
    w.put<uint64_t>(d.bytes.size());
    w.bytes(d.bytes.data(), d.bytes.size());
  }
  for (const auto& core : p.cores) {
    w.put<uint64_t>(core.size());
    for (const auto& in : core) {
      auto n = static_cast<uint16_t>(op_info(in.op).operands.size());
      w.put<uint16_t>(static_cast<uint16_t>(in.op));
      w.put<uint16_t>(in.kernel);
      w.put<uint16_t>(n);
      w.put<uint16_t>(0);
      for (uint16_t i = 0; i < n; ++i) w.put<int64_t>(in.a[i]);
    }
  }
  w.bytes(kTrailer, 8);
  return std::move(w.out);
}

Program decode(const std::vector<uint8_t>& bytes, const std::string& file) {
  Reader r(bytes, file);
  char magic[8];
  r.raw(magic, 8, "magic");
  if (std::memcmp(magic, kMagic, 8) != 0) r.fail("not a spyre-sim program (bad magic)");
  auto version = r.get<uint32_t>("version");
  if (version != Program::kVersion)
    r.fail("program format version " + std::to_string(version) + ", this build reads " +
           std::to_string(Program::kVersion));
  Program p;
  p.num_cores = r.get<uint32_t>("num_cores");
  if (p.num_cores == 0 || p.num_cores > 4096) r.fail("implausible core count");
  p.dram_bytes = r.get<uint64_t>("dram_bytes");
  auto nk = r.count("kernel", 4);
  for (uint64_t i = 0; i < nk; ++i) p.kernels.push_back(r.str("kernel name"));
  auto nt = r.count("tensor", 30);
  for (uint64_t i = 0; i < nt; ++i) {
    TensorSym t;
    t.name = r.str("tensor name");
    t.role = r.str("tensor role");
    auto dt = r.get<uint8_t>("tensor dtype");
    if (!dtype_valid(dt)) r.fail("tensor '" + t.name + "' has unknown dtype code");
    t.dtype = static_cast<DType>(dt);
    auto rank = r.get<uint32_t>("tensor rank");
    if (rank > 16) r.fail("tensor '" + t.name + "' has rank " + std::to_string(rank));
    t.size.resize(rank);
    t.stride.resize(rank);
    for (auto& s : t.size) s = r.get<int64_t>("tensor size");
    for (auto& s : t.stride) s = r.get<int64_t>("tensor stride");
    t.dram_addr = r.get<uint64_t>("tensor address");
    t.bytes = r.get<uint64_t>("tensor bytes");
    p.tensors.push_back(std::move(t));
  }
  auto nd = r.count("data segment", 16);
  for (uint64_t i = 0; i < nd; ++i) {
    DataSegment d;
    d.dram_addr = r.get<uint64_t>("data address");
    auto len = r.count("data byte", 1);
    d.bytes.resize(len);
    r.raw(d.bytes.data(), len, "data bytes");
    p.data.push_back(std::move(d));
  }
  p.cores.resize(p.num_cores);
  for (uint32_t c = 0; c < p.num_cores; ++c) {
    auto n = r.count("instruction", 8);
    p.cores[c].reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      Instr in;
      auto op = r.get<uint16_t>("opcode");
      if (!opcode_valid(op))
        r.fail("core " + std::to_string(c) + " instruction " + std::to_string(i) +
               ": unknown opcode " + std::to_string(op));
      in.op = static_cast<Opcode>(op);
      in.kernel = r.get<uint16_t>("kernel id");
      auto nops = r.get<uint16_t>("operand count");
      r.get<uint16_t>("reserved");
      if (nops != op_info(in.op).operands.size())
        r.fail("core " + std::to_string(c) + " instruction " + std::to_string(i) + " (" +
               std::string(op_info(in.op).mnemonic) + "): " + std::to_string(nops) +
               " operands, expected " + std::to_string(op_info(in.op).operands.size()));
      for (uint16_t k = 0; k < nops; ++k) in.a[k] = r.get<int64_t>("operand");
      p.cores[c].push_back(in);
    }
  }
  char trailer[8];
  r.raw(trailer, 8, "trailer");
  if (std::memcmp(trailer, kTrailer, 8) != 0 || !r.at_end()) r.fail("corrupt program trailer");
  try {
    validate(p);
  } catch (const Error& e) {
    throw Error(file, e.what());
  }
  return p;
}

}  // namespace spyre::isa
