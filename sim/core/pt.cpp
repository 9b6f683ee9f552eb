// PT array: closed-form latency and the matmul (formulas in units.h).
#include <algorithm>
#include <vector>

#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

struct Mm {
  int64_t a, b, c, m, n, k, lda, ldb, ldc, flags;
  isa::DType dt;
  int64_t es;
};
Mm decode(const isa::Instr& in) {
  Mm x{in.get("a"),   in.get("b"),   in.get("c"),   in.get("m"),     in.get("n"),
       in.get("k"),   in.get("lda"), in.get("ldb"), in.get("ldc"),   in.get("flags"),
       static_cast<isa::DType>(in.get("dt")), 0};
  x.es = isa::dtype_size_bytes(x.dt);
  return x;
}

}  // namespace

uint64_t pt_cycles(const arch::ArchConfig& cfg, const isa::Instr& in) {
  Mm x = decode(in);
  int64_t k_eff = ceil_div(x.k * x.es, 2);
  int64_t folds = ceil_div(x.m, cfg.pt_rows) * ceil_div(x.n, cfg.pt_lanes);
  return static_cast<uint64_t>(folds * k_eff + cfg.pt_rows + cfg.pt_lanes - 2);
}

std::vector<ByteRange> pt_lx_ranges(const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return {};
  std::vector<ByteRange> r;
  r.push_back(strided_range(x.a, {{x.m, x.lda * x.es}, {x.k, x.es}}, x.es));
  if (x.flags & 2)
    r.push_back(strided_range(x.b, {{x.n, x.ldb * x.es}, {x.k, x.es}}, x.es));
  else
    r.push_back(strided_range(x.b, {{x.k, x.ldb * x.es}, {x.n, x.es}}, x.es));
  r.push_back(strided_range(x.c, {{x.m, x.ldc * 4}, {x.n, 4}}, 4));
  return r;
}

void pt_execute(uint8_t* lx, const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return;
  const bool trans_b = x.flags & 2, accumulate = x.flags & 1;
  const bool integer = x.dt == isa::DType::I8 || x.dt == isa::DType::I32 ||
                       x.dt == isa::DType::I64 || x.dt == isa::DType::Bool;
  // Operands gathered once as fp32 (exact for every input dtype the PT takes): A row-major
  // [m,k], B transposed to [n,k] so the inner loop reads both contiguously.
  std::vector<float> a(static_cast<size_t>(x.m * x.k)), bt(static_cast<size_t>(x.n * x.k));
  for (int64_t i = 0; i < x.m; ++i)
    for (int64_t kk = 0; kk < x.k; ++kk)
      a[static_cast<size_t>(i * x.k + kk)] =
          static_cast<float>(isa::load_element(lx + x.a + (i * x.lda + kk) * x.es, x.dt));
  for (int64_t j = 0; j < x.n; ++j)
    for (int64_t kk = 0; kk < x.k; ++kk) {
      int64_t off = trans_b ? (j * x.ldb + kk) : (kk * x.ldb + j);
      bt[static_cast<size_t>(j * x.k + kk)] =
          static_cast<float>(isa::load_element(lx + x.b + off * x.es, x.dt));
    }
  for (int64_t i = 0; i < x.m; ++i) {
    const float* ar = a.data() + i * x.k;
    for (int64_t j = 0; j < x.n; ++j) {
      const float* bc = bt.data() + j * x.k;
      uint8_t* cp = lx + x.c + (i * x.ldc + j) * 4;
      float acc = accumulate ? static_cast<float>(isa::load_element(cp, isa::DType::F32)) : 0.0f;
      if (integer) {  // int8 products accumulate exactly in int32, then join the fp32 sum
        int64_t s = 0;
        for (int64_t kk = 0; kk < x.k; ++kk)
          s += static_cast<int64_t>(ar[kk]) * static_cast<int64_t>(bc[kk]);
        acc += static_cast<float>(static_cast<int32_t>(s));
      } else {  // fp32 accumulation, kk ascending
        for (int64_t kk = 0; kk < x.k; ++kk) acc += ar[kk] * bc[kk];
      }
      isa::store_element(cp, isa::DType::F32, acc);
    }
  }
}

}  // namespace spyre::sim
