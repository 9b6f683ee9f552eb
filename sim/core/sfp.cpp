// SFP vector unit: closed-form latency (spyre/arch/unit_timing.h: lanes per dtype, latency and
// cycles per vector per op class, the lane tree of reductions) and the element-wise arithmetic.
// Element (r, c) of an operand is element index e = r * rs + c * cs: byte base + e * esize(dtype),
// or for I4 (sfp.cvt only, isa::validate rejects it elsewhere) byte base + floor(e / 2), nibble
// e mod 2. Values are computed in double from load_element() and rounded by store_element().
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "sfp_random.h"
#include "sfp_special.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/isa/dtype.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

using isa::DType;
using isa::Opcode;
using isa::SfpFn;

struct Operand {
  int64_t base, rs, cs;
  DType dt;
  double load(const uint8_t* lx, int64_t r, int64_t c) const {
    return isa::load_element(lx + base, dt, r * rs + c * cs);
  }
  void store(uint8_t* lx, int64_t r, int64_t c, double v) const {
    isa::store_element(lx + base, dt, r * rs + c * cs, v);
  }
  ByteRange range(int64_t rows, int64_t cols) const {
    return element_range(base, {{rows, rs}, {cols, cs}}, dt);
  }
};

// `name` is dst, a, b or c (kSfpOperands).
Operand op(const isa::Instr& in, std::string_view name, DType dt) {
  for (const SfpOperandNames& k : kSfpOperands) {
    if (name != k.base) continue;
    const bool no_cs = name == "dst" && in.op == Opcode::SfpReduce;  // sfp.red's dst: a column
    return {in.operand(k.base_slots), in.operand(k.rs_slots), no_cs ? 0 : in.operand(k.cs_slots),
            dt};
  }
  throw Error(std::string(isa::op_info(in.op).mnemonic),
              "no SFP operand '" + std::string(name) + "'");
}

bool is_compare(SfpFn f) { return isa::sfp_fn_info(f).cls == isa::SfpClass::Compare; }

// A binary instruction's result type: `dt` (its operands'), a bool for a compare, and fp32 for
// the random numbers (their operands are 32-bit integer seeds and offsets).
DType binary_result(SfpFn f, DType dt) {
  if (is_compare(f)) return DType::Bool;
  if (f == SfpFn::Rand || f == SfpFn::Randn) return DType::F32;
  return dt;
}

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

double unary(SfpFn f, double x) {
  switch (f) {
    case SfpFn::Neg: return -x;
    case SfpFn::Abs: return std::fabs(x);
    case SfpFn::Relu: return std::isnan(x) ? x : std::max(0.0, x);
    case SfpFn::Recip: return 1.0 / x;
    case SfpFn::Square: return x * x;
    case SfpFn::Sqrt: return std::sqrt(x);
    case SfpFn::Rsqrt: return 1.0 / std::sqrt(x);
    case SfpFn::Exp: return std::exp(x);
    case SfpFn::Log: return std::log(x);
    case SfpFn::Tanh: return std::tanh(x);
    case SfpFn::Erf: return std::erf(x);
    case SfpFn::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case SfpFn::Floor: return std::floor(x);
    case SfpFn::Ceil: return std::ceil(x);
    case SfpFn::Sign: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
    case SfpFn::Not: return x == 0.0 ? 1.0 : 0.0;
    case SfpFn::Log1p: return std::log1p(x);
    case SfpFn::Round: return std::nearbyint(x);
    case SfpFn::Sin: return std::sin(x);
    case SfpFn::Cos: return std::cos(x);
    case SfpFn::Trunc: return std::trunc(x);
    case SfpFn::BitNot: return static_cast<double>(~static_cast<int64_t>(x));
    case SfpFn::Expm1: return std::expm1(x);
    case SfpFn::Log2: return std::log2(x);
    case SfpFn::Log10: return std::log10(x);
    case SfpFn::Exp2: return std::exp2(x);
    case SfpFn::Tan: return std::tan(x);
    case SfpFn::Asin: return std::asin(x);
    case SfpFn::Acos: return std::acos(x);
    case SfpFn::Atan: return std::atan(x);
    case SfpFn::Sinh: return std::sinh(x);
    case SfpFn::Cosh: return std::cosh(x);
    case SfpFn::Asinh: return std::asinh(x);
    case SfpFn::Acosh: return std::acosh(x);
    case SfpFn::Atanh: return std::atanh(x);
    case SfpFn::Erfc: return std::erfc(x);
    case SfpFn::Erfinv: return special::erfinv(x);
    case SfpFn::Lgamma: return std::lgamma(x);
    case SfpFn::SignBit: return std::signbit(x) ? 1.0 : 0.0;
    case SfpFn::FrexpMantissa:
    case SfpFn::FrexpExponent: {
      if (!std::isfinite(x)) return f == SfpFn::FrexpMantissa ? x : 0.0;
      int e = 0;
      const double m = std::frexp(x, &e);
      return f == SfpFn::FrexpMantissa ? m : static_cast<double>(e);
    }
    case SfpFn::I0: return special::first_kind(x, 0, true);
    case SfpFn::I0e: return special::i_scaled(x, 0);
    case SfpFn::I1: return special::odd(x, special::first_kind(x, 1, true));
    case SfpFn::I1e: return special::odd(x, special::i_scaled(x, 1));
    case SfpFn::BesselJ0: return special::first_kind(x, 0, false);
    case SfpFn::BesselJ1: return special::odd(x, special::first_kind(x, 1, false));
    case SfpFn::BesselY0: return special::second_kind(x, 0, false);
    case SfpFn::BesselY1: return special::second_kind(x, 1, false);
    case SfpFn::BesselK0: return special::second_kind(x, 0, true);
    case SfpFn::BesselK1: return special::second_kind(x, 1, true);
    case SfpFn::BesselK0e: return special::k_scaled(x, 0);
    case SfpFn::BesselK1e: return special::k_scaled(x, 1);
    case SfpFn::SphBesselJ0: return x == 0.0 ? 1.0 : std::isinf(x) ? 0.0 : std::sin(x) / x;
    case SfpFn::Ndtri: return M_SQRT2 * special::erfinv(2.0 * x - 1.0);
    case SfpFn::Digamma: return special::digamma(x);
    case SfpFn::Erfcx: return special::erfcx(x);
    case SfpFn::AiryAi: return special::airy_ai(x);
    default: return x;  // copy
  }
}

// a << b or a >> b (arithmetic) in `bits`-bit two's complement, as torch: a shift by the
// width or more gives 0, or -1 for a negative value shifted right.
double shift(bool left, double a, double b, int bits) {
  const auto v = static_cast<int64_t>(a), n = static_cast<int64_t>(b);
  if (n < 0 || n >= bits) return !left && v < 0 ? -1.0 : 0.0;
  if (!left) return static_cast<double>(v >> n);
  const uint64_t u = static_cast<uint64_t>(v) << n;
  const int pad = 64 - bits;  // sign-extend the low `bits` bits
  return static_cast<double>(static_cast<int64_t>(u << pad) >> pad);
}

// The value next to a toward b in fp16 (half) or bf16: a step of one on a's bit pattern in
// that format (away from zero when b lies beyond a, toward zero otherwise); from zero, the
// smallest subnormal with b's sign.
double next_after_16(double a, double b, bool bf16) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return b;
  const auto fa = static_cast<float>(a);
  uint16_t h = bf16 ? isa::f32_to_bf16(fa) : isa::f32_to_f16(fa);
  if (a == 0.0)
    h = static_cast<uint16_t>((b > 0.0 ? 0x0000u : 0x8000u) | 1u);
  else if ((a < b) == (a > 0.0))
    ++h;
  else
    --h;
  return bf16 ? isa::bf16_to_f32(h) : isa::f16_to_f32(h);
}

// `bits`: the width of the integer dtype the shifts work in.
double binary(SfpFn f, double a, double b, int bits) {
  switch (f) {
    case SfpFn::Add: return a + b;
    case SfpFn::Sub: return a - b;
    case SfpFn::Mul: return a * b;
    case SfpFn::Div: return a / b;
    case SfpFn::Max: return nan_max(a, b);
    case SfpFn::Min: return nan_min(a, b);
    case SfpFn::Pow: return std::pow(a, b);
    case SfpFn::And: return (a != 0.0 && b != 0.0) ? 1.0 : 0.0;
    case SfpFn::Or: return (a != 0.0 || b != 0.0) ? 1.0 : 0.0;
    case SfpFn::Lt: return a < b;
    case SfpFn::Le: return a <= b;
    case SfpFn::Gt: return a > b;
    case SfpFn::Ge: return a >= b;
    case SfpFn::Eq: return a == b;
    case SfpFn::Ne: return a != b;
    case SfpFn::BitAnd:
      return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
    case SfpFn::BitOr:
      return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
    case SfpFn::BitXor:
      return static_cast<double>(static_cast<int64_t>(a) ^ static_cast<int64_t>(b));
    case SfpFn::Atan2: return std::atan2(a, b);
    case SfpFn::Hypot: return std::hypot(a, b);
    case SfpFn::CopySign: return std::copysign(a, b);
    case SfpFn::Fmod: return std::fmod(a, b);
    case SfpFn::Remainder: {  // the divisor's sign, as Python's % (an exact zero keeps b's sign)
      double r = std::fmod(a, b);
      if (r != 0.0 && (r < 0.0) != (b < 0.0)) r += b;
      return r == 0.0 ? std::copysign(0.0, b) : r;
    }
    case SfpFn::Xor: return ((a != 0.0) != (b != 0.0)) ? 1.0 : 0.0;
    case SfpFn::FloorDiv: return std::floor(a / b);
    case SfpFn::TruncDiv: return std::trunc(a / b);
    case SfpFn::Gcd:
      return static_cast<double>(std::gcd(static_cast<int64_t>(a), static_cast<int64_t>(b)));
    case SfpFn::NextAfter: return std::nextafter(static_cast<float>(a), static_cast<float>(b));
    case SfpFn::NextAfterF16: return next_after_16(a, b, false);
    case SfpFn::NextAfterBF16: return next_after_16(a, b, true);
    case SfpFn::Shl:
    case SfpFn::Shr: return shift(f == SfpFn::Shl, a, b, bits);
    case SfpFn::ChebyshevT: return special::polynomial(special::Poly::ChebyshevT, a, b);
    case SfpFn::ChebyshevU: return special::polynomial(special::Poly::ChebyshevU, a, b);
    case SfpFn::ChebyshevV: return special::polynomial(special::Poly::ChebyshevV, a, b);
    case SfpFn::ChebyshevW: return special::polynomial(special::Poly::ChebyshevW, a, b);
    case SfpFn::ShiftedChebyshevT:
      return special::shifted_chebyshev(special::Poly::ChebyshevT, a, b);
    case SfpFn::ShiftedChebyshevU:
      return special::shifted_chebyshev(special::Poly::ChebyshevU, a, b);
    case SfpFn::ShiftedChebyshevV:
      return special::shifted_chebyshev(special::Poly::ChebyshevV, a, b);
    case SfpFn::ShiftedChebyshevW:
      return special::shifted_chebyshev(special::Poly::ChebyshevW, a, b);
    case SfpFn::HermiteH: return special::polynomial(special::Poly::HermiteH, a, b);
    case SfpFn::HermiteHe: return special::polynomial(special::Poly::HermiteHe, a, b);
    case SfpFn::LaguerreL: return special::polynomial(special::Poly::LaguerreL, a, b);
    case SfpFn::LegendreP: return special::polynomial(special::Poly::LegendreP, a, b);
    case SfpFn::Zeta: return special::zeta(a, b);
    case SfpFn::Polygamma: return special::polygamma(a, b);
    case SfpFn::Igamma: return special::igamma(a, b);
    case SfpFn::Igammac: return special::igammac(a, b);
    case SfpFn::Rand: return random::uniform(random::word(a), random::word(b));
    case SfpFn::Randn: return random::normal(random::word(a), random::word(b));
    default: return a;
  }
}

double reduce_init(SfpFn f) {
  switch (f) {
    case SfpFn::RMax: return -std::numeric_limits<double>::infinity();
    case SfpFn::RMin: return std::numeric_limits<double>::infinity();
    case SfpFn::Prod: return 1.0;
    default: return 0.0;
  }
}

double reduce_step(SfpFn f, double acc, double x) {
  switch (f) {
    case SfpFn::RMax: return nan_max(acc, x);
    case SfpFn::RMin: return nan_min(acc, x);
    case SfpFn::Prod: return acc * x;
    default: return acc + x;
  }
}

}  // namespace

uint64_t sfp_cycles(const arch::ArchConfig& cfg, const isa::Instr& in) {
  return static_cast<uint64_t>(arch::sfp_op_cycles(cfg, in));
}

ByteRanges sfp_lx_ranges(const isa::Instr& in) {
  const int64_t rows = SPYRE_OPERAND(in, "rows"), cols = SPYRE_OPERAND(in, "cols");
  switch (in.op) {
    case Opcode::SfpUnary:
      return {op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols),
              op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols)};
    case Opcode::SfpBinary: {
      DType d = binary_result(static_cast<SfpFn>(SPYRE_OPERAND(in, "fn")),
                              static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      return {op(in, "dst", d).range(rows, cols),
              op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols),
              op(in, "b", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols)};
    }
    case Opcode::SfpSelect:
      return {op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols),
              op(in, "c", DType::Bool).range(rows, cols),
              op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols),
              op(in, "b", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols)};
    case Opcode::SfpReduce:
      return {op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, 1),
              op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols)};
    case Opcode::SfpConvert:
      return {op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "ddt"))).range(rows, cols),
              op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "sdt"))).range(rows, cols)};
    case Opcode::SfpFill:
      return {op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))).range(rows, cols)};
    default: return {};
  }
}

void sfp_execute(uint8_t* lx, const isa::Instr& in) {
  const int64_t rows = SPYRE_OPERAND(in, "rows"), cols = SPYRE_OPERAND(in, "cols");
  switch (in.op) {
    case Opcode::SfpUnary: {
      auto f = static_cast<SfpFn>(SPYRE_OPERAND(in, "fn"));
      Operand d = op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))),
              a = op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, unary(f, a.load(lx, r, c)));
      return;
    }
    case Opcode::SfpBinary: {
      auto f = static_cast<SfpFn>(SPYRE_OPERAND(in, "fn"));
      Operand d = op(in, "dst", binary_result(f, static_cast<DType>(SPYRE_OPERAND(in, "dt"))));
      Operand a = op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))),
              b = op(in, "b", static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      const int bits =
          8 * static_cast<int>(isa::dtype_size_bytes(static_cast<DType>(SPYRE_OPERAND(in, "dt"))));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          d.store(lx, r, c, binary(f, a.load(lx, r, c), b.load(lx, r, c), bits));
      return;
    }
    case Opcode::SfpSelect: {
      Operand d = op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))),
              k = op(in, "c", DType::Bool);
      Operand a = op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt"))),
              b = op(in, "b", static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const Operand& pick = k.load(lx, r, c) != 0.0 ? a : b;
          d.store(lx, r, c, pick.load(lx, r, c));
        }
      return;
    }
    case Opcode::SfpReduce: {
      auto f = static_cast<SfpFn>(SPYRE_OPERAND(in, "fn"));
      Operand d = op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt"))),
              a = op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      const bool acc = SPYRE_OPERAND(in, "acc") != 0;
      if (f == SfpFn::ArgMax || f == SfpFn::ArgMin) {  // first extreme; NaN wins
        for (int64_t r = 0; r < rows; ++r) {
          int64_t best = 0;
          double bv = a.load(lx, r, 0);
          for (int64_t c = 1; c < cols && !std::isnan(bv); ++c) {
            const double x = a.load(lx, r, c);
            if (std::isnan(x) || (f == SfpFn::ArgMax ? x > bv : x < bv)) best = c, bv = x;
          }
          d.store(lx, r, 0, static_cast<double>(best));
        }
        return;
      }
      for (int64_t r = 0; r < rows; ++r) {
        double v = acc ? d.load(lx, r, 0) : reduce_init(f);
        for (int64_t c = 0; c < cols; ++c) v = reduce_step(f, v, a.load(lx, r, c));
        d.store(lx, r, 0, v);
      }
      return;
    }
    case Opcode::SfpConvert: {
      Operand d = op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "ddt"))),
              a = op(in, "a", static_cast<DType>(SPYRE_OPERAND(in, "sdt")));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, a.load(lx, r, c));
      return;
    }
    case Opcode::SfpFill: {
      Operand d = op(in, "dst", static_cast<DType>(SPYRE_OPERAND(in, "dt")));
      double v = isa::operand_float(SPYRE_OPERAND(in, "value"));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, v);
      return;
    }
    default: return;
  }
}

}  // namespace spyre::sim
