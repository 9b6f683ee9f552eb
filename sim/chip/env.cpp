#include "spyre/sim/env.h"

#include "spyre/error.h"
#include "spyre/sim/data_worker.h"
#include "spyre/sim/report.h"

namespace spyre::sim {

void Env::settle_data() const {
  if (data) data->drain();
}

std::string InstrRef::where() const {
  std::string s = "core " + std::to_string(core) + " instruction #" + std::to_string(index);
  if (instr) s += " (" + std::string(isa::op_info(instr->op).mnemonic) + ")";
  return s;
}

ByteRange strided_range(int64_t base, const std::vector<Dim>& dims, int64_t elem_bytes) {
  __int128 lo = base, hi = base;
  for (const Dim& d : dims) {
    if (d.count <= 0) return {};
    __int128 span = static_cast<__int128>(d.count - 1) * d.stride_bytes;
    (span < 0 ? lo : hi) += span;
  }
  if (elem_bytes <= 0) return {};
  hi += elem_bytes;
  constexpr __int128 kMax = INT64_MAX, kMin = INT64_MIN;
  auto clamp = [&](__int128 v) {
    return static_cast<int64_t>(v > kMax ? kMax : v < kMin ? kMin : v);
  };
  return {clamp(lo), clamp(hi)};
}

ByteRange element_range(int64_t base, const std::vector<Dim>& dims_in_elements, isa::DType dt) {
  const ByteRange e = strided_range(0, dims_in_elements, 1);  // [first, last + 1) in elements
  if (e.empty()) return {};
  const int64_t bits = isa::dtype_bits(dt);
  auto floor_div = [](__int128 a, __int128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const __int128 lo = base + floor_div(static_cast<__int128>(e.lo) * bits, 8);
  const __int128 hi = base + floor_div(static_cast<__int128>(e.hi - 1) * bits, 8) + (bits + 7) / 8;
  constexpr __int128 kMax = INT64_MAX, kMin = INT64_MIN;
  auto clamp = [&](__int128 v) {
    return static_cast<int64_t>(v > kMax ? kMax : v < kMin ? kMin : v);
  };
  return {clamp(lo), clamp(hi)};
}

void check_range(const ByteRange& r, int64_t limit, const char* space, const InstrRef& at) {
  if (r.empty()) return;
  if (r.lo >= 0 && r.hi <= limit) return;
  SPYRE_FAIL("spyre/core/instr", at.where(),
             std::string(space) + " access [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) +
                 ") is outside the " + space + " of " + std::to_string(limit) + " bytes");
}

std::string operand_summary(const isa::Instr& in) {
  const auto& info = isa::op_info(in.op);
  std::string s;
  for (size_t i = 0; i < info.operands.size(); ++i) {
    const auto& spec = info.operands[i];
    if (!s.empty()) s += ' ';
    s += spec.name + "=";
    if (spec.is_float)
      s += std::to_string(isa::operand_float(in.a[i]));
    else if (spec.name == "fn" && isa::sfp_fn_valid(in.a[i]))
      s += isa::sfp_fn_info(static_cast<isa::SfpFn>(in.a[i])).name;
    else if ((spec.name == "dt" || spec.name == "sdt" || spec.name == "ddt") &&
             isa::dtype_valid(in.a[i]))
      s += isa::dtype_name(static_cast<isa::DType>(in.a[i]));
    else
      s += std::to_string(in.a[i]);
  }
  return s;
}

}  // namespace spyre::sim
