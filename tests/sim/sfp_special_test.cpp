// The SFP's special functions (sim/core/sfp_special.h) against closed forms and published
// values. tests/python/test_sfp_special.py checks them against eager PyTorch on a grid.
#include "../../sim/core/sfp_special.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace spyre::sim::special {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(SfpSpecial, PolynomialsMatchTheirClosedForms) {
  for (double x : {-2.5, -1.0, -0.3, 0.0, 0.7, 1.0, 3.0}) {
    EXPECT_NEAR(polynomial(Poly::ChebyshevT, x, 3), 4 * x * x * x - 3 * x, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::ChebyshevU, x, 2), 4 * x * x - 1, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::ChebyshevV, x, 2), 4 * x * x - 2 * x - 1, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::ChebyshevW, x, 2), 4 * x * x + 2 * x - 1, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::HermiteH, x, 3), 8 * x * x * x - 12 * x, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::HermiteHe, x, 3), x * x * x - 3 * x, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::LaguerreL, x, 2), (x * x - 4 * x + 2) / 2, 1e-12) << x;
    EXPECT_NEAR(polynomial(Poly::LegendreP, x, 3), (5 * x * x * x - 3 * x) / 2, 1e-12) << x;
    // The shifted polynomials are the plain ones at 2x - 1.
    EXPECT_NEAR(shifted_chebyshev(Poly::ChebyshevU, x, 2.9),
                polynomial(Poly::ChebyshevU, 2 * x - 1, 2), 1e-12)
        << x;
  }
  // Above degree 6 or 8 inside (-1, 1) the trigonometric forms take over: T_n(cos t) = cos(nt).
  EXPECT_NEAR(polynomial(Poly::ChebyshevT, std::cos(0.3), 20), std::cos(6.0), 1e-12);
  EXPECT_NEAR(polynomial(Poly::ChebyshevU, std::cos(0.3), 20), std::sin(6.3) / std::sin(0.3),
              1e-12);
  // The degree is truncated toward zero; negative degrees give 0, NaN gives 0 (torch's cast).
  EXPECT_EQ(polynomial(Poly::LegendreP, 0.5, 1.9), 0.5);
  EXPECT_EQ(polynomial(Poly::HermiteH, 0.5, -1.0), 0.0);
  EXPECT_EQ(polynomial(Poly::ChebyshevT, 0.5, NAN), 0.0);
  // Edges: torch's values at +-1, Hermite's limit and the degree cap.
  EXPECT_EQ(polynomial(Poly::ChebyshevU, -1.0, 3), -4.0);
  EXPECT_EQ(polynomial(Poly::ChebyshevV, -1.0, 2), 5.0);
  EXPECT_EQ(polynomial(Poly::ChebyshevW, 1.0, 2), 5.0);
  EXPECT_TRUE(std::isnan(polynomial(Poly::HermiteH, 0.1, 129)));
  EXPECT_TRUE(std::isnan(polynomial(Poly::LegendreP, 0.1, 1e12)));
}

TEST(SfpSpecial, ZetaAndPolygammaMatchKnownValues) {
  EXPECT_NEAR(zeta(2.0, 1.0), M_PI * M_PI / 6.0, 1e-14);
  EXPECT_NEAR(zeta(4.0, 1.0), std::pow(M_PI, 4) / 90.0, 1e-14);
  EXPECT_NEAR(zeta(2.0, 0.5), M_PI * M_PI / 2.0, 1e-13);  // (2^2 - 1) zeta(2)
  // zeta(3, -1.5) = (-1.5)^-3 + (-0.5)^-3 + zeta(3, 0.5), zeta(3, 1/2) = 7 zeta(3).
  EXPECT_NEAR(zeta(3.0, -1.5), 7.0 * 1.2020569031595942 - 8.0 / 27.0 - 8.0, 1e-12);
  EXPECT_EQ(zeta(1.0, 2.0), kInf);
  EXPECT_TRUE(std::isnan(zeta(0.5, 2.0)));
  EXPECT_EQ(zeta(2.0, -3.0), kInf);
  EXPECT_TRUE(std::isnan(zeta(2.5, -1.5)));
  // q far below 0 needs |q| direct terms: past 2^20 of them NaN, not minutes per element.
  EXPECT_TRUE(std::isnan(zeta(2.0, -1e7 - 0.5)));
  // trigamma's asymptotic series is torch's, to about 1e-9 (torch gives the same double).
  EXPECT_NEAR(polygamma(1.0, 1.0), M_PI * M_PI / 6.0, 1e-9);
  EXPECT_NEAR(polygamma(2.0, 1.0), -2.0 * 1.2020569031595942, 1e-12);  // -2 zeta(3)
  EXPECT_NEAR(polygamma(0.0, 1.0), -0.5772156649015329, 1e-10);
  EXPECT_NEAR(polygamma(3.0, 0.5), std::pow(M_PI, 4), 1e-9);  // 6 zeta(4, 1/2) = pi^4
  EXPECT_EQ(polygamma(1.0, 0.0), kInf);
  EXPECT_EQ(polygamma(2.0, -1.0), -kInf);
}

TEST(SfpSpecial, IncompleteGammaMatchesKnownValues) {
  for (double x : {0.1, 1.0, 2.5, 10.0, 40.0}) {  // a = 1: P = 1 - e^-x
    EXPECT_NEAR(igamma(1.0, x), -std::expm1(-x), 1e-14) << x;
    EXPECT_NEAR(igammac(1.0, x), std::exp(-x), 1e-14 * std::exp(-x) + 1e-300) << x;
    // a = 1/2: P = erf(sqrt x)
    EXPECT_NEAR(igamma(0.5, x), std::erf(std::sqrt(x)), 1e-14) << x;
    EXPECT_NEAR(igamma(3.5, x) + igammac(3.5, x), 1.0, 1e-14) << x;
  }
  EXPECT_EQ(igamma(0.0, 1.0), 1.0);
  EXPECT_TRUE(std::isnan(igamma(0.0, 0.0)));
  EXPECT_EQ(igamma(2.0, 0.0), 0.0);
  EXPECT_EQ(igammac(2.0, 0.0), 1.0);
  EXPECT_EQ(igamma(kInf, 3.0), 0.0);
  EXPECT_EQ(igammac(2.0, kInf), 0.0);
  EXPECT_TRUE(std::isnan(igammac(-1.0, 1.0)));
}

TEST(SfpSpecial, AiryAiMatchesKnownValues) {
  EXPECT_NEAR(airy_ai(0.0), 0.3550280538878172, 1e-15);
  EXPECT_NEAR(airy_ai(1.0), 0.1352924163128814, 1e-14);
  EXPECT_NEAR(airy_ai(-1.0), 0.5355608832923521, 1e-14);
  EXPECT_NEAR(airy_ai(-5.0), 0.3507610090241142, 1e-13);
  EXPECT_EQ(airy_ai(200.0), 0.0);
  EXPECT_TRUE(std::isnan(airy_ai(kInf)));
  EXPECT_TRUE(std::isnan(airy_ai(-kInf)));
}

}  // namespace
}  // namespace spyre::sim::special
