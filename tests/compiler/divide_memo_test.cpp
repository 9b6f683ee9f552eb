// The memo of choose_matmul_grid inside one compile (divide.h): it answers like a fresh search,
// and its key separates calls whose LX working-set functions differ.
#include <gtest/gtest.h>

#include "spyre/arch/arch.h"
#include "spyre/compiler/context.h"
#include "spyre/compiler/divide.h"

namespace spyre::compiler {
namespace {

// A working set like matmul.cpp's (fp16 tiles, fp32 accumulators) plus `extra` bytes per
// accumulator slot (stands for an epilogue's slots).
MatmulLxFn lx_fn(int64_t extra) {
  return [extra](int64_t tm, int64_t tn, int64_t tk, int cs, int64_t na, int64_t nb) {
    return na * tm * tk * 2 + nb * tk * tn * 2 + cs * (tm * tn * 6 + extra);
  };
}

void expect_same(const MatmulGrid& a, const MatmulGrid& b) {
  EXPECT_EQ(a.to_json(), b.to_json());
  EXPECT_EQ(a.tm, b.tm);
  EXPECT_EQ(a.tn, b.tn);
  EXPECT_EQ(a.tk, b.tk);
}

TEST(MatmulGridMemo, RepeatedCallsAnswerLikeAFreshSearch) {
  const auto cfg = arch::load_arch("spyre", {});
  const int64_t budget = cfg.lx_usable_bytes();
  const std::vector<int64_t> key = {0};
  for (int64_t n : {768, 2048, 3072}) {
    const MatmulShape s{1, 128, n, 768, 2, 2, 2};
    nlohmann::json fresh_alts;
    const MatmulGrid fresh = choose_matmul_grid(s, cfg, budget, lx_fn(0), {}, nullptr, &fresh_alts);
    GridMemo memo;
    for (int rep = 0; rep < 2; ++rep) {  // the second call is served by the memo
      nlohmann::json alts;
      expect_same(choose_matmul_grid(s, cfg, budget, lx_fn(0), {}, &memo, &alts, &key), fresh);
      EXPECT_EQ(alts, fresh_alts);
    }
  }
}

TEST(MatmulGridMemo, KeySeparatesWorkingSetFunctions) {
  const auto cfg = arch::load_arch("spyre", {});
  const int64_t budget = cfg.lx_usable_bytes();
  const MatmulShape s{1, 2048, 2048, 2048, 2, 2, 2};
  // 600 KiB per accumulator slot leaves room for smaller tiles only.
  const int64_t big = 600 * 1024;
  const MatmulGrid small_ws = choose_matmul_grid(s, cfg, budget, lx_fn(0));
  const MatmulGrid big_ws = choose_matmul_grid(s, cfg, budget, lx_fn(big));
  ASSERT_NE(small_ws.lx_bytes, big_ws.lx_bytes);  // the two functions do pick differently
  GridMemo memo;
  const std::vector<int64_t> k0 = {0}, k1 = {big};
  expect_same(choose_matmul_grid(s, cfg, budget, lx_fn(0), {}, &memo, nullptr, &k0), small_ws);
  expect_same(choose_matmul_grid(s, cfg, budget, lx_fn(big), {}, &memo, nullptr, &k1), big_ws);
  expect_same(choose_matmul_grid(s, cfg, budget, lx_fn(0), {}, &memo, nullptr, &k0), small_ws);
  // A forced split is part of the key too.
  MatmulSplit forced;
  forced.parts = {1, 1, 32, 1};
  const MatmulGrid f = choose_matmul_grid(s, cfg, budget, lx_fn(0), forced, &memo, nullptr, &k0);
  EXPECT_TRUE(f.forced);
  EXPECT_EQ(f.gn, 32);
}

TEST(MatmulGridMemo, EachCompileHasItsOwn) {
  const auto cfg = arch::load_arch("spyre", {});
  const int64_t budget = cfg.lx_usable_bytes();
  const MatmulShape s{1, 2048, 2048, 2048, 2, 2, 2};
  const std::vector<int64_t> key = {0};
  {
    GridMemo first;
    choose_matmul_grid(s, cfg, budget, lx_fn(0), {}, &first, nullptr, &key);
  }
  // Same key, different function: a memo shared between compiles would answer wrongly.
  GridMemo second;
  expect_same(choose_matmul_grid(s, cfg, budget, lx_fn(600 * 1024), {}, &second, nullptr, &key),
              choose_matmul_grid(s, cfg, budget, lx_fn(600 * 1024)));
  // A compile's context owns its memo: compiles in a row do not share answers.
  const CompileContext a(CompileOptions{}), b(CompileOptions{});
  EXPECT_NE(&a.grid_memo, &b.grid_memo);
  EXPECT_TRUE(b.grid_memo.answers.empty());
}

}  // namespace
}  // namespace spyre::compiler
