// The SFP's special functions (isa/include/spyre/isa/sfp_fn.def): plain functions of doubles,
// computed in double and rounded to the instruction's dtype by the caller (sfp.cpp). Each
// follows torch's definition and its values at the edges (NaN, the poles, +-inf), so that a
// compiled op matches eager PyTorch; tests/sim/sfp_special_test.cpp states the known values.
#pragma once

#include <cstdint>

namespace spyre::sim::special {

double erfinv(double y);   // erf^-1 on [-1, 1]; +-inf at +-1, NaN outside
double digamma(double x);  // psi; -inf at 0, NaN at the negative integers
double erfcx(double x);    // exp(x^2) erfc(x)

// Bessel functions. nu: the order (0 or 1 in torch.special).
double first_kind(double x, double nu, bool modified);   // j_nu(|x|), i_nu(|x|)
double second_kind(double x, double nu, bool modified);  // y_nu, k_nu: NaN below 0
double i_scaled(double x, double nu);                    // exp(-|x|) i_nu(|x|)
double k_scaled(double x, double nu);                    // exp(x) k_nu(x)
double odd(double x, double v);                          // v with the sign of x (odd orders)
double airy_ai(double x);                                // Ai; NaN at +-inf

// The orthogonal polynomials of torch.special, of degree n = trunc(n_value) (0 below degree 0).
enum class Poly : uint8_t {
  ChebyshevT,  // first kind
  ChebyshevU,  // second kind
  ChebyshevV,  // third kind
  ChebyshevW,  // fourth kind
  HermiteH,    // physicists'
  HermiteHe,   // probabilists'
  LaguerreL,
  LegendreP,
};
double polynomial(Poly p, double x, double n_value);
// T*, U*, V*, W*: the Chebyshev polynomials of the interval [0, 1], p(2x - 1).
double shifted_chebyshev(Poly p, double x, double n_value);

double zeta(double s, double q);       // Hurwitz zeta: sum over k >= 0 of (k + q)^-s
double polygamma(double n, double x);  // the n-th derivative of digamma (n >= 0)
double igamma(double a, double x);     // regularized lower incomplete gamma P(a, x)
double igammac(double a, double x);    // regularized upper incomplete gamma Q(a, x)

}  // namespace spyre::sim::special
