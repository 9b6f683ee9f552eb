// SFP vector unit: closed-form latency (spyre/arch/unit_timing.h: lanes per dtype, latency and
// cycles per vector per op class, the lane tree of reductions) and the element-wise arithmetic.
// Element (r, c) of an operand is element index e = r * rs + c * cs: byte base + e * esize(dtype),
// or for I4 (sfp.cvt only, isa::validate rejects it elsewhere) byte base + floor(e / 2), nibble
// e mod 2. Values are computed in double from load_element() and rounded by store_element().
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
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
    return {in.get(k.base), in.get(k.rs), no_cs ? 0 : in.get(k.cs), dt};
  }
  throw Error(std::string(isa::op_info(in.op).mnemonic),
              "no SFP operand '" + std::string(name) + "'");
}

bool is_compare(SfpFn f) { return isa::sfp_fn_info(f).cls == isa::SfpClass::Compare; }

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

// erf^-1(y): Giles' single-precision approximation ("Approximating the erfinv function", GPU
// Computing Gems, 2011), then Newton steps on erf in double.
double erfinv(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return NAN;
  if (y == 1.0 || y == -1.0) return y * std::numeric_limits<double>::infinity();
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      x = x * w + c;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      x = x * w + c;
  }
  x *= y;
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (M_2_SQRTPI * std::exp(-x * x));
  return x;
}

// psi(x): the reflection psi(1 - x) - pi / tan(pi x) below 0.5, the recurrence up to 6, then the
// asymptotic series (Abramowitz & Stegun 6.3.18). torch: -inf at 0, NaN at negative integers.
double digamma(double x) {
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) return NAN;
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x < 0.0 && x == std::floor(x)) return NAN;
  if (x < 0.5) return digamma(1.0 - x) - M_PI / std::tan(M_PI * x);
  double r = 0.0;
  for (; x < 6.0; x += 1.0) r -= 1.0 / x;
  const double z = 1.0 / (x * x);
  return r + std::log(x) - 0.5 / x -
         z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
}

// exp(x^2) erfc(x); past 26, where erfc underflows, the asymptotic series (A&S 7.1.23).
double erfcx(double x) {
  if (x < 26.0) return std::exp(x * x) * std::erfc(x);
  const double z = 1.0 / (2.0 * x * x);
  return (1.0 - z * (1.0 - 3.0 * z * (1.0 - 5.0 * z))) / (x * std::sqrt(M_PI));
}

// The Bessel functions of <cmath> (C++17 special functions) on their domain x >= 0, extended
// by parity (j0, i0 even; j1, i1 odd) or to torch's values outside it.
template <class F>
double bessel(F f, double x) {
  try {
    return f(x);
  } catch (const std::exception&) {  // libstdc++ reports a failed convergence by throwing
    return NAN;
  }
}
double odd(double x, double v) { return x < 0.0 ? -v : v; }
double second_kind(double x, double nu, bool modified) {  // y_nu, k_nu
  if (std::isnan(x) || x < 0.0) return NAN;
  if (x == 0.0) return (modified ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return 0.0;
  return bessel(
      [&](double a) { return modified ? std::cyl_bessel_k(nu, a) : std::cyl_neumann(nu, a); }, x);
}
double first_kind(double x, double nu, bool modified) {  // j_nu, i_nu of |x|
  const double a = std::fabs(x);
  if (std::isnan(x)) return NAN;
  if (std::isinf(x)) return modified ? std::numeric_limits<double>::infinity() : 0.0;
  return bessel(
      [&](double v) { return modified ? std::cyl_bessel_i(nu, v) : std::cyl_bessel_j(nu, v); }, a);
}

double i_scaled(double x, double nu) {  // exp(-|x|) i_nu(|x|); 0 at +-inf
  return std::isinf(x) ? 0.0 : std::exp(-std::fabs(x)) * first_kind(x, nu, true);
}
double k_scaled(double x, double nu) {  // exp(x) k_nu(x) where x is positive and finite
  const double k = second_kind(x, nu, true);
  return x > 0.0 && !std::isinf(x) ? std::exp(x) * k : k;
}

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
    case SfpFn::Erfinv: return erfinv(x);
    case SfpFn::Lgamma: return std::lgamma(x);
    case SfpFn::SignBit: return std::signbit(x) ? 1.0 : 0.0;
    case SfpFn::I0: return first_kind(x, 0, true);
    case SfpFn::I0e: return i_scaled(x, 0);
    case SfpFn::I1: return odd(x, first_kind(x, 1, true));
    case SfpFn::I1e: return odd(x, i_scaled(x, 1));
    case SfpFn::BesselJ0: return first_kind(x, 0, false);
    case SfpFn::BesselJ1: return odd(x, first_kind(x, 1, false));
    case SfpFn::BesselY0: return second_kind(x, 0, false);
    case SfpFn::BesselY1: return second_kind(x, 1, false);
    case SfpFn::BesselK0: return second_kind(x, 0, true);
    case SfpFn::BesselK1: return second_kind(x, 1, true);
    case SfpFn::BesselK0e: return k_scaled(x, 0);
    case SfpFn::BesselK1e: return k_scaled(x, 1);
    case SfpFn::SphBesselJ0: return x == 0.0 ? 1.0 : std::isinf(x) ? 0.0 : std::sin(x) / x;
    case SfpFn::Ndtri: return M_SQRT2 * erfinv(2.0 * x - 1.0);
    case SfpFn::Digamma: return digamma(x);
    case SfpFn::Erfcx: return erfcx(x);
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
    case SfpFn::Shl:
    case SfpFn::Shr: return shift(f == SfpFn::Shl, a, b, bits);
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

std::vector<ByteRange> sfp_lx_ranges(const isa::Instr& in) {
  const int64_t rows = in.get("rows"), cols = in.get("cols");
  auto dt = [&](const char* n) { return static_cast<DType>(in.get(n)); };
  switch (in.op) {
    case Opcode::SfpUnary:
      return {op(in, "dst", dt("dt")).range(rows, cols), op(in, "a", dt("dt")).range(rows, cols)};
    case Opcode::SfpBinary: {
      DType d = is_compare(static_cast<SfpFn>(in.get("fn"))) ? DType::Bool : dt("dt");
      return {op(in, "dst", d).range(rows, cols), op(in, "a", dt("dt")).range(rows, cols),
              op(in, "b", dt("dt")).range(rows, cols)};
    }
    case Opcode::SfpSelect:
      return {op(in, "dst", dt("dt")).range(rows, cols), op(in, "c", DType::Bool).range(rows, cols),
              op(in, "a", dt("dt")).range(rows, cols), op(in, "b", dt("dt")).range(rows, cols)};
    case Opcode::SfpReduce:
      return {op(in, "dst", dt("dt")).range(rows, 1), op(in, "a", dt("dt")).range(rows, cols)};
    case Opcode::SfpConvert:
      return {op(in, "dst", dt("ddt")).range(rows, cols), op(in, "a", dt("sdt")).range(rows, cols)};
    case Opcode::SfpFill: return {op(in, "dst", dt("dt")).range(rows, cols)};
    default: return {};
  }
}

void sfp_execute(uint8_t* lx, const isa::Instr& in) {
  const int64_t rows = in.get("rows"), cols = in.get("cols");
  auto dt = [&](const char* n) { return static_cast<DType>(in.get(n)); };
  switch (in.op) {
    case Opcode::SfpUnary: {
      auto f = static_cast<SfpFn>(in.get("fn"));
      Operand d = op(in, "dst", dt("dt")), a = op(in, "a", dt("dt"));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, unary(f, a.load(lx, r, c)));
      return;
    }
    case Opcode::SfpBinary: {
      auto f = static_cast<SfpFn>(in.get("fn"));
      Operand d = op(in, "dst", is_compare(f) ? DType::Bool : dt("dt"));
      Operand a = op(in, "a", dt("dt")), b = op(in, "b", dt("dt"));
      const int bits = 8 * static_cast<int>(isa::dtype_size_bytes(dt("dt")));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          d.store(lx, r, c, binary(f, a.load(lx, r, c), b.load(lx, r, c), bits));
      return;
    }
    case Opcode::SfpSelect: {
      Operand d = op(in, "dst", dt("dt")), k = op(in, "c", DType::Bool);
      Operand a = op(in, "a", dt("dt")), b = op(in, "b", dt("dt"));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const Operand& pick = k.load(lx, r, c) != 0.0 ? a : b;
          d.store(lx, r, c, pick.load(lx, r, c));
        }
      return;
    }
    case Opcode::SfpReduce: {
      auto f = static_cast<SfpFn>(in.get("fn"));
      Operand d = op(in, "dst", dt("dt")), a = op(in, "a", dt("dt"));
      const bool acc = in.get("acc") != 0;
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
      Operand d = op(in, "dst", dt("ddt")), a = op(in, "a", dt("sdt"));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, a.load(lx, r, c));
      return;
    }
    case Opcode::SfpFill: {
      Operand d = op(in, "dst", dt("dt"));
      double v = isa::operand_float(in.get("value"));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) d.store(lx, r, c, v);
      return;
    }
    default: return;
  }
}

}  // namespace spyre::sim
