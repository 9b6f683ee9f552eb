// The SFP's special functions: see sfp_special.h. Values at the edges follow torch (ATen's
// Math.h), checked against eager PyTorch by tests/python/test_sfp_special.py.
#include "sfp_special.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace spyre::sim::special {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
}  // namespace

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

// Ai(x) through the modified Bessel function K_1/3 above 0 and J_+-1/3 below (Abramowitz &
// Stegun 10.4.14-15), J_-1/3 = cos(pi/3) J_1/3 - sin(pi/3) Y_1/3. Above 103.892 Ai underflows
// double, where torch returns 0.
double airy_ai(double x) {
  if (std::isnan(x) || std::isinf(x)) return NAN;
  if (x > 103.892) return 0.0;
  const double ai0 = 1.0 / (std::cbrt(9.0) * std::tgamma(2.0 / 3.0));  // Ai(0)
  if (x == 0.0) return ai0;
  const double z = std::fabs(x), zeta = 2.0 / 3.0 * z * std::sqrt(z), nu = 1.0 / 3.0;
  if (x > 0.0)
    return bessel([&](double v) { return std::sqrt(z / 3.0) / M_PI * std::cyl_bessel_k(nu, v); },
                  zeta);
  return bessel(
      [&](double v) {
        const double j = std::cyl_bessel_j(nu, v), y = std::cyl_neumann(nu, v);
        const double j_minus = 0.5 * j - std::sqrt(3.0) / 2.0 * y;
        return std::sqrt(z) / 3.0 * (j + j_minus);
      },
      zeta);
}

namespace {

// Degrees beyond this give NaN instead of running the recurrence for hours: torch would loop
// up to 2^63 times; no float16/bfloat16/float32 result of such a degree means anything.
constexpr int64_t kMaxDegree = int64_t{1} << 20;
// torch's Hermite limit for float32 (getHermitianLimit): above it, NaN.
constexpr int64_t kHermiteLimit = 128;

// torch casts the degree with static_cast<int64_t>: trunc; NaN and out-of-range values come
// out as INT64_MIN on x86, a negative degree.
int64_t degree(double n) {
  if (std::isnan(n) || n >= 9.2e18 || n <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(n);
}

bool even(int64_t n) { return n % 2 == 0; }

// The three-term recurrence from p0 = 1, p1: p_{k+1} = step(k, p_k, p_{k-1}) for k = 1..n-1.
// A NaN stays NaN, so the loop stops there.
template <class Step>
double recur(int64_t n, double p1, Step step) {
  double p = 1.0, q = p1;
  for (int64_t k = 1; k < n && !std::isnan(q); ++k) {
    const double r = step(static_cast<double>(k), q, p);
    p = q;
    q = r;
  }
  return q;
}

double chebyshev(Poly kind, double x, int64_t n, int64_t trig_from) {
  const double nd = static_cast<double>(n), sgn = even(n) ? 1.0 : -1.0;
  if (std::fabs(x) == 1.0) {
    switch (kind) {
      case Poly::ChebyshevT: return x > 0.0 ? 1.0 : sgn;
      case Poly::ChebyshevU: return (x > 0.0 ? 1.0 : sgn) * (nd + 1.0);
      case Poly::ChebyshevV: return x > 0.0 ? 1.0 : sgn * (2.0 * nd + 1.0);
      default: return x > 0.0 ? 2.0 * nd + 1.0 : sgn;  // W
    }
  }
  if (n > trig_from && std::fabs(x) < 1.0) {  // the closed forms in theta = acos(x)
    const double t = std::acos(x);
    switch (kind) {
      case Poly::ChebyshevT: return std::cos(nd * t);
      case Poly::ChebyshevU: return std::sin((nd + 1.0) * t) / std::sin(t);
      case Poly::ChebyshevV: return std::cos((nd + 0.5) * t) / std::cos(t / 2.0);
      default: return std::sin((nd + 0.5) * t) / std::sin(t / 2.0);  // W
    }
  }
  if (n == 0) return 1.0;
  const double p1 = kind == Poly::ChebyshevT   ? x
                    : kind == Poly::ChebyshevU ? 2.0 * x
                    : kind == Poly::ChebyshevV ? 2.0 * x - 1.0
                                               : 2.0 * x + 1.0;
  return recur(n, p1, [x](double, double q, double p) { return 2.0 * x * q - p; });
}

bool is_chebyshev(Poly p) {
  return p == Poly::ChebyshevT || p == Poly::ChebyshevU || p == Poly::ChebyshevV ||
         p == Poly::ChebyshevW;
}

}  // namespace

double polynomial(Poly kind, double x, double n_value) {
  const int64_t n = degree(n_value);
  if (n < 0) return 0.0;
  if (n > kMaxDegree) return NAN;
  switch (kind) {
    case Poly::ChebyshevT: return chebyshev(kind, x, n, 6);
    case Poly::ChebyshevU:
    case Poly::ChebyshevV:
    case Poly::ChebyshevW: return chebyshev(kind, x, n, 8);
    case Poly::HermiteH:  // H_{k+1} = 2x H_k - 2k H_{k-1}
      if (n == 0) return 1.0;
      if (n > kHermiteLimit) return NAN;
      return recur(n, 2.0 * x,
                   [x](double k, double q, double p) { return 2.0 * x * q - 2.0 * k * p; });
    case Poly::HermiteHe:  // He_{k+1} = x He_k - k He_{k-1}
      if (n == 0) return 1.0;
      if (n > kHermiteLimit) return NAN;
      return recur(n, x, [x](double k, double q, double p) { return x * q - k * p; });
    case Poly::LaguerreL:  // (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
      if (x == 0.0 || n == 0) return 1.0;
      return recur(n, 1.0 - x, [x](double k, double q, double p) {
        return ((2.0 * k + 1.0 - x) * q - k * p) / (k + 1.0);
      });
    case Poly::LegendreP:  // (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
      if (std::fabs(x) == 1.0) return x > 0.0 || even(n) ? 1.0 : -1.0;
      if (n == 0) return 1.0;
      return recur(n, x, [x](double k, double q, double p) {
        return ((2.0 * k + 1.0) * x * q - k * p) / (k + 1.0);
      });
  }
  return NAN;
}

double shifted_chebyshev(Poly kind, double x, double n_value) {
  if (!is_chebyshev(kind)) return NAN;
  const int64_t n = degree(n_value);
  if (n < 0) return 0.0;
  if (n > kMaxDegree) return NAN;
  return chebyshev(kind, 2.0 * x - 1.0, n, 6);
}

namespace {

// The Euler-Maclaurin tail's coefficients (2j)! / B_2j for j = 1..12, from the Bernoulli
// numbers B_2 .. B_24.
std::array<double, 12> euler_maclaurin_coefficients() {
  const std::array<std::pair<double, double>, 12> b = {{{1, 6},
                                                        {-1, 30},
                                                        {1, 42},
                                                        {-1, 30},
                                                        {5, 66},
                                                        {-691, 2730},
                                                        {7, 6},
                                                        {-3617, 510},
                                                        {43867, 798},
                                                        {-174611, 330},
                                                        {854513, 138},
                                                        {-236364091, 2730}}};
  std::array<double, 12> c{};
  double factorial = 1.0;
  for (int j = 0; j < 12; ++j) {
    factorial *= static_cast<double>((2 * j + 1) * (2 * j + 2));
    c[static_cast<size_t>(j)] =
        factorial * b[static_cast<size_t>(j)].second / b[static_cast<size_t>(j)].first;
  }
  return c;
}

constexpr double kEps = 1.11022302462515654042e-16;  // half the double epsilon
constexpr int64_t kMaxTerms = int64_t{1} << 20;

}  // namespace

// Hurwitz zeta by Euler-Maclaurin summation: the first terms directly (at least 9, and until
// q + k passes 9), then the integral and the Bernoulli tail. torch's domain: s = 1 gives inf,
// s < 1 NaN; q at a non-positive integer inf, other q <= 0 need an integer s.
double zeta(double s, double q) {
  static const std::array<double, 12> coef = euler_maclaurin_coefficients();
  if (std::isnan(s) || std::isnan(q)) return NAN;
  if (s == 1.0) return kInf;
  if (s < 1.0) return NAN;
  if (q <= 0.0) {
    if (q == std::floor(q)) return kInf;
    if (s != std::floor(s)) return NAN;
  }
  double sum = std::pow(q, -s), a = q, b = 0.0;
  for (int64_t i = 0; i < 9 || a <= 9.0; ++i) {
    if (i > kMaxTerms || a + 1.0 == a) return NAN;  // q far below 0: no end in sight
    a += 1.0;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < kEps) return sum;
  }
  const double w = a;
  sum += b * w / (s - 1.0) - 0.5 * b;
  double fac = 1.0, k = 0.0;
  for (double c : coef) {
    fac *= s + k;
    b /= w;
    const double t = fac * b / c;
    sum += t;
    if (std::fabs(t / sum) < kEps) break;
    k += 1.0;
    fac *= s + k;
    b /= w;
    k += 1.0;
  }
  return sum;
}

namespace {

// psi'(x): the reflection below 0.5, the recurrence up to x + 6, then the asymptotic series.
double trigamma(double x) {
  double sign = 1.0, r = 0.0;
  if (x < 0.5) {
    const double s = std::sin(M_PI * x);
    sign = -1.0;
    r = -M_PI * M_PI / (s * s);
    x = 1.0 - x;
  }
  for (int i = 0; i < 6; ++i, x += 1.0) r += 1.0 / (x * x);
  const double z = 1.0 / (x * x);
  r += (1.0 + 1.0 / (2.0 * x) + z * (1.0 / 6.0 - z * (1.0 / 30.0 - z / 42.0))) / x;
  return sign * r;
}

}  // namespace

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2; digamma and trigamma below.
double polygamma(double n, double x) {
  const int64_t order = degree(n);
  if (order < 0) return NAN;
  if (order == 0) return digamma(x);
  if (order == 1) return trigamma(x);
  const double nd = static_cast<double>(order);
  return (even(order) ? -1.0 : 1.0) * std::exp(std::lgamma(nd + 1.0)) * zeta(nd + 1.0, x);
}

namespace {

constexpr double kTiny = 1e-300;  // keeps the continued fraction's denominators off 0

// x^a e^-x / Gamma(a), the factor in front of both the series and the continued fraction.
double gamma_prefactor(double a, double x) {
  return std::exp(a * std::log(x) - x - std::lgamma(a));
}

// P(a, x) by its power series: x^a e^-x / Gamma(a + 1) * sum x^k / ((a + 1) .. (a + k)).
double lower_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int64_t k = 1; k < kMaxTerms; ++k) {
    term *= x / (a + static_cast<double>(k));
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEps) break;
  }
  return sum * gamma_prefactor(a, x);
}

// Q(a, x) by Legendre's continued fraction, evaluated with the modified Lentz method.
double upper_fraction(double a, double x) {
  double b = x + 1.0 - a, c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int64_t i = 1; i < kMaxTerms; ++i) {
    const double an = -static_cast<double>(i) * (static_cast<double>(i) - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return h * gamma_prefactor(a, x);
}

// torch's edges: NaN for a negative argument; P(0, x > 0) = 1, P(0, 0) NaN; P(a, 0) = 0;
// P(inf, x) = 0 and P(a, inf) = 1, NaN when both are infinite. Returns true with *p set when
// (a, x) is one of them.
bool igamma_edge(double a, double x, double* p) {
  if (std::isnan(a) || std::isnan(x) || a < 0.0 || x < 0.0) return *p = NAN, true;
  if (a == 0.0) return *p = x > 0.0 ? 1.0 : NAN, true;
  if (x == 0.0) return *p = 0.0, true;
  if (std::isinf(a)) return *p = std::isinf(x) ? NAN : 0.0, true;
  if (std::isinf(x)) return *p = 1.0, true;
  return false;
}

}  // namespace

double igamma(double a, double x) {
  double p;
  if (igamma_edge(a, x, &p)) return p;
  return x < a + 1.0 ? lower_series(a, x) : 1.0 - upper_fraction(a, x);
}

double igammac(double a, double x) {
  double p;
  if (igamma_edge(a, x, &p)) return std::isnan(p) ? p : 1.0 - p;
  return x < a + 1.0 ? 1.0 - lower_series(a, x) : upper_fraction(a, x);
}

}  // namespace spyre::sim::special
