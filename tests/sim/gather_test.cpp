// dma.gather / dma.scatter (isa.def): rows whose DRAM addresses come from an index vector in
// LX. Exact cycles against the dma.load closed form (default "spyre" parameters,
// sim_test_util.h) and against a dma.store of the same addresses, the data moved for int64 and
// int32 indices, and the bounds check.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sim_test_util.h"
#include "spyre/error.h"

namespace spyre::sim {
namespace {

using isa::DType;

TEST(DmaGather, TimesAsALoadOfNRows) {
  // The index vector (LX 0..24) is zero: 3 rows of 4096 B, all from DRAM row 0. As
  // dma.load rows=3 (timing_test.cpp, one burst in flight): starts at 1, request 0 issues at
  // 17 and lands 208 (4096 / 100 = 40.96 at the DRAM, then 150); request 1 lands 399 and
  // request 2 lands 440 + 150 = 590.
  auto p = test::program(1, R"(.core 0
  dma.gather dram=0 lx=4096 idx=0 n=3 bytes=4096 dram_stride=4096 lx_stride=4096 limit=8
  halt)");
  auto r = test::run(p, test::config());
  EXPECT_EQ(r.cycles, 590u);
  EXPECT_EQ(test::busy(r, 0, "dma_in"), 589u);
  EXPECT_EQ(r.dram_read_bytes, 12288u);
}

TEST(DmaGather, ZeroRowsTakesOnlySetup) {
  // No requests: completes at setup end, 1 + 16 = 17.
  auto p = test::program(1, R"(.core 0
  dma.gather dram=0 lx=4096 idx=0 n=0 bytes=64 dram_stride=64 lx_stride=64 limit=8
  halt)");
  EXPECT_EQ(test::run(p, test::config()).cycles, 17u);
}

// DRAM: a table of 8 rows x 16 B (row i: bytes 16i..16i+15 = i*16 + j) at 0, the index vector
// at 1024; the gathered rows come back to DRAM 2048.
DeviceMemory run_gather(const std::vector<int64_t>& idx, DType idt, int64_t limit) {
  DeviceMemory m(4096, 0);
  for (int i = 0; i < 128; ++i) m.data()[i] = static_cast<uint8_t>(i);
  const size_t isz = idt == DType::I32 ? 4 : 8;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idt == DType::I32) {
      const auto v = static_cast<int32_t>(idx[i]);
      std::memcpy(m.data() + 1024 + 4 * i, &v, 4);
    } else {
      std::memcpy(m.data() + 1024 + 8 * i, &idx[i], 8);
    }
  }
  const std::string n = std::to_string(idx.size());
  auto p =
      test::program(1,
                    ".core 0\n"
                    "  dma.load dram=1024 lx=0 bytes=" +
                        std::to_string(idx.size() * isz) +
                        "\n"
                        "  dma.gather dram=0 lx=256 idx=0 n=" +
                        n + " bytes=16 dram_stride=16 lx_stride=32 limit=" + std::to_string(limit) +
                        " idt=" + std::to_string(static_cast<int>(idt)) +
                        "\n"
                        "  sync.sig q=dma_in tok=0\n"
                        "  sync.wait q=dma_out tok=0\n"
                        "  dma.store lx=256 dram=2048 bytes=16 rows=" +
                        n +
                        " lx_stride=32 dram_stride=16\n"
                        "  halt\n",
                    4096);
  simulate(p, test::config(1), m);
  return m;
}

TEST(DmaGather, CopiesTheIndexedRowsInt64) {
  const std::vector<int64_t> idx = {5, 0, 7, 5};
  auto m = run_gather(idx, DType::I64, 8);
  for (size_t i = 0; i < idx.size(); ++i)
    for (int j = 0; j < 16; ++j)
      EXPECT_EQ(m.data()[2048 + 16 * i + static_cast<size_t>(j)], idx[i] * 16 + j);
}

TEST(DmaGather, CopiesTheIndexedRowsInt32) {
  const std::vector<int64_t> idx = {3, 6, 1};
  auto m = run_gather(idx, DType::I32, 8);
  for (size_t i = 0; i < idx.size(); ++i)
    for (int j = 0; j < 16; ++j)
      EXPECT_EQ(m.data()[2048 + 16 * i + static_cast<size_t>(j)], idx[i] * 16 + j);
}

TEST(DmaGather, IndexOutsideTheLimitNamesCoreInstructionAndIndex) {
  try {
    run_gather({1, 2, 8}, DType::I64, 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("core 0"), std::string::npos) << w;
    EXPECT_NE(w.find("dma.gather"), std::string::npos) << w;
    EXPECT_NE(w.find("index 2 = 8 is outside [0, 8)"), std::string::npos) << w;
  }
  EXPECT_THROW(run_gather({-1}, DType::I64, 8), Error);
}

TEST(DmaScatter, TimesAsAStoreOfTheSameRows) {
  // Zero indices: 3 rows of 4096 B to DRAM row 0, as a dma.store of 3 rows at stride 0.
  auto scatter = test::program(1, R"(.core 0
  dma.scatter dram=0 lx=4096 idx=0 n=3 bytes=4096 dram_stride=4096 lx_stride=4096 limit=8
  halt)");
  auto store = test::program(1, R"(.core 0
  dma.store lx=4096 dram=0 bytes=4096 rows=3 lx_stride=4096 dram_stride=0
  halt)");
  auto a = test::run(scatter, test::config()), b = test::run(store, test::config());
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(test::busy(a, 0, "dma_out"), test::busy(b, 0, "dma_out"));
  EXPECT_EQ(a.dram_write_bytes, 12288u);
  EXPECT_EQ(a.dram_read_bytes, 0u);
}

// LX rows i (16 B, bytes 16i..16i+15 of DRAM 0) scattered to DRAM 2048 + 16 k_i.
DeviceMemory run_scatter(const std::vector<int64_t>& idx, int64_t limit) {
  DeviceMemory m(4096, 0);
  for (int i = 0; i < 128; ++i) m.data()[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < idx.size(); ++i) std::memcpy(m.data() + 1024 + 8 * i, &idx[i], 8);
  const std::string n = std::to_string(idx.size());
  auto p = test::program(
      1,
      ".core 0\n"
      "  dma.load dram=1024 lx=0 bytes=" +
          std::to_string(8 * idx.size()) +
          "\n"
          "  dma.load dram=0 lx=256 bytes=128\n"
          "  sync.sig q=dma_in tok=0\n"
          "  sync.wait q=dma_out tok=0\n"
          "  dma.scatter dram=2048 lx=256 idx=0 n=" +
          n + " bytes=16 dram_stride=16 lx_stride=16 limit=" + std::to_string(limit) + "\n  halt\n",
      4096);
  simulate(p, test::config(1), m);
  return m;
}

TEST(DmaScatter, WritesEachRowAtItsIndex) {
  const std::vector<int64_t> idx = {6, 0, 3};
  auto m = run_scatter(idx, 8);
  for (size_t i = 0; i < idx.size(); ++i)
    for (int j = 0; j < 16; ++j)
      EXPECT_EQ(m.data()[2048 + 16 * static_cast<size_t>(idx[i]) + static_cast<size_t>(j)],
                16 * i + static_cast<size_t>(j));
  for (int j = 0; j < 16; ++j) EXPECT_EQ(m.data()[2048 + 16 + j], 0);  // row 1: not written
}

TEST(DmaScatter, ALaterRowWinsWhereTwoOverlap) {
  auto m = run_scatter({2, 2}, 8);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(m.data()[2048 + 32 + j], 16 + j);
}

TEST(DmaScatter, IndexOutsideTheLimitNamesCoreInstructionAndIndex) {
  try {
    run_scatter({1, 8}, 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("dma.scatter"), std::string::npos) << w;
    EXPECT_NE(w.find("index 1 = 8 is outside [0, 8)"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace spyre::sim
