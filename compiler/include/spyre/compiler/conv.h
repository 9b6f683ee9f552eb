#pragma once
// extern_kernels.convolution lowered as an implicit GEMM on the PT arrays
// (compiler/lower/conv.cpp).
#include "spyre/compiler/kernel.h"

namespace spyre::compiler {

// 2-D convolution (stride, padding, dilation, groups, optional bias), channels-last input and
// output: per group, output [N*OH*OW, OC/groups] accumulated over (kh, kw, ic chunk) on PT.
void lower_conv(Kernel& k);
// The tilings searched are those compiler.debug.conv_halo allows (compile.h).

}  // namespace spyre::compiler
