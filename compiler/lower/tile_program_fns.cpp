// The Inductor pointwise ops the SFP computes in one instruction, by name: ops.<name> -> the
// SFP function of isa/include/spyre/isa/sfp_fn.def (Builder::lower, tile_program.cpp).
#include <map>
#include <string>

#include "tile_program_builder.h"

namespace spyre::compiler::tile_program_detail {

const std::map<std::string, std::string>& unary_fns() {
  static const std::map<std::string, std::string> m = {{"neg", "neg"},
                                                       {"abs", "abs"},
                                                       {"relu", "relu"},
                                                       {"reciprocal", "reciprocal"},
                                                       {"square", "square"},
                                                       {"sqrt", "sqrt"},
                                                       {"rsqrt", "rsqrt"},
                                                       {"exp", "exp"},
                                                       {"log", "log"},
                                                       {"tanh", "tanh"},
                                                       {"erf", "erf"},
                                                       {"sigmoid", "sigmoid"},
                                                       {"floor", "floor"},
                                                       {"ceil", "ceil"},
                                                       {"sign", "sign"},
                                                       {"logical_not", "not"},
                                                       {"identity", "copy"},
                                                       {"log1p", "log1p"},
                                                       {"round", "round"},
                                                       {"sin", "sin"},
                                                       {"cos", "cos"},
                                                       {"trunc", "trunc"},
                                                       {"expm1", "expm1"},
                                                       {"log2", "log2"},
                                                       {"log10", "log10"},
                                                       {"exp2", "exp2"},
                                                       {"tan", "tan"},
                                                       {"asin", "asin"},
                                                       {"acos", "acos"},
                                                       {"atan", "atan"},
                                                       {"sinh", "sinh"},
                                                       {"cosh", "cosh"},
                                                       {"asinh", "asinh"},
                                                       {"acosh", "acosh"},
                                                       {"atanh", "atanh"},
                                                       {"erfc", "erfc"},
                                                       {"erfinv", "erfinv"},
                                                       {"lgamma", "lgamma"},
                                                       {"i0", "i0"},
                                                       {"modified_bessel_i0", "i0"},
                                                       {"i0e", "i0e"},
                                                       {"i1", "i1"},
                                                       {"modified_bessel_i1", "i1"},
                                                       {"i1e", "i1e"},
                                                       {"bessel_j0", "bessel_j0"},
                                                       {"bessel_j1", "bessel_j1"},
                                                       {"bessel_y0", "bessel_y0"},
                                                       {"bessel_y1", "bessel_y1"},
                                                       {"modified_bessel_k0", "bessel_k0"},
                                                       {"modified_bessel_k1", "bessel_k1"},
                                                       {"scaled_modified_bessel_k0", "bessel_k0e"},
                                                       {"scaled_modified_bessel_k1", "bessel_k1e"},
                                                       {"spherical_bessel_j0", "sph_bessel_j0"},
                                                       {"ndtri", "ndtri"},
                                                       {"digamma", "digamma"},
                                                       {"erfcx", "erfcx"},
                                                       {"airy_ai", "airy_ai"}};
  return m;
}
const std::map<std::string, std::string>& binary_fns() {
  static const std::map<std::string, std::string> m = {
      {"add", "add"},
      {"sub", "sub"},
      {"mul", "mul"},
      {"truediv", "div"},
      {"div", "div"},
      {"maximum", "max"},
      {"minimum", "min"},
      {"pow", "pow"},
      {"logical_and", "and"},
      {"logical_or", "or"},
      {"lt", "lt"},
      {"le", "le"},
      {"gt", "gt"},
      {"ge", "ge"},
      {"eq", "eq"},
      {"ne", "ne"},
      {"and_", "and"},
      {"or_", "or"},
      {"atan2", "atan2"},
      {"hypot", "hypot"},
      {"copysign", "copysign"},
      {"fmod", "fmod"},
      {"remainder", "remainder"},
      {"logical_xor", "xor"},
      {"div_rn", "div"},
      {"floordiv", "floordiv"},
      {"truncdiv", "truncdiv"},
      {"chebyshev_polynomial_t", "chebyshev_t"},
      {"chebyshev_polynomial_u", "chebyshev_u"},
      {"chebyshev_polynomial_v", "chebyshev_v"},
      {"chebyshev_polynomial_w", "chebyshev_w"},
      {"shifted_chebyshev_polynomial_t", "shifted_chebyshev_t"},
      {"shifted_chebyshev_polynomial_u", "shifted_chebyshev_u"},
      {"shifted_chebyshev_polynomial_v", "shifted_chebyshev_v"},
      {"shifted_chebyshev_polynomial_w", "shifted_chebyshev_w"},
      {"hermite_polynomial_h", "hermite_h"},
      {"hermite_polynomial_he", "hermite_he"},
      {"laguerre_polynomial_l", "laguerre_l"},
      {"legendre_polynomial_p", "legendre_p"},
      {"zeta", "zeta"},
      {"polygamma", "polygamma"},
      {"igamma", "igamma"},
      {"igammac", "igammac"},
      {"rand", "rand"},
      {"randn", "randn"}};
  return m;
}
bool is_random(const std::string& fn) { return fn == "rand" || fn == "randn"; }
bool is_compare(const std::string& fn) {
  return fn == "lt" || fn == "le" || fn == "gt" || fn == "ge" || fn == "eq" || fn == "ne";
}

}  // namespace spyre::compiler::tile_program_detail
