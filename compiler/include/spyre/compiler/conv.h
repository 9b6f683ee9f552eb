#pragma once
// extern_kernels.convolution lowered as an implicit GEMM on the PT arrays
// (compiler/lower/conv.cpp).
#include "spyre/compiler/kernel.h"

namespace spyre::compiler {

// 2-D convolution (stride, padding, dilation, groups, optional bias), channels-last input and
// output: per group, output [N*OH*OW, OC/groups] accumulated over (kh, kw, ic chunk) on PT.
void lower_conv(Kernel& k);

// Which tilings the search may pick (tests force each path): Auto any, Halo only halo tilings
// (when the kernel has more than one tap), Taps only one strided load per tap.
enum class ConvHalo { Auto, Halo, Taps };
class ScopedConvHalo {
 public:
  explicit ScopedConvHalo(ConvHalo h);
  ~ScopedConvHalo();
  ScopedConvHalo(const ScopedConvHalo&) = delete;
  ScopedConvHalo& operator=(const ScopedConvHalo&) = delete;

 private:
  ConvHalo saved_;
};

}  // namespace spyre::compiler
