// Functional results: pt.mm against a reference loop, SFP ops (broadcast strides, compare,
// select, reductions, conversion, fill). Inputs go DRAM -> LX by DMA and results come back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "sim_test_util.h"

namespace spyre::sim {
namespace {

using isa::DType;

constexpr int kImage = 4096;  // bytes of LX moved in and out around the SFP instructions

void put(DeviceMemory& m, size_t off, DType dt, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    isa::store_element(m.data() + off + i * isa::dtype_size_bytes(dt), dt, v[i]);
}
double get(const DeviceMemory& m, size_t off, DType dt, size_t i) {
  return isa::load_element(m.data() + off + i * isa::dtype_size_bytes(dt), dt);
}

// Loads DRAM[0, 4096) into LX 0 of core 0, runs `sfp` (on corelet 0), stores LX back to DRAM.
DeviceMemory run_sfp(DeviceMemory image, const std::string& sfp) {
  auto p = test::program(1,
                         ".core 0\n"
                         "  dma.load dram=0 lx=0 bytes=4096\n"
                         "  sync.sig q=dma_in tok=0\n"
                         "  sync.wait q=sfp0 tok=0\n" +
                             sfp +
                             "\n  sync.sig q=sfp0 tok=1\n"
                             "  sync.wait q=dma_out tok=1\n"
                             "  dma.store lx=0 dram=0 bytes=4096\n"
                             "  halt\n",
                         kImage);
  image.resize(kImage);
  simulate(p, test::config(1), image);
  return image;
}

struct MmCase {
  int m, n, k;
  bool trans_b;
};

void check_matmul(const MmCase& c) {
  // A f16 [m,k] at 0, B f16 [k,n] (or [n,k] when trans_b) at 8192, C f32 [m,n] at 16384.
  const int a0 = 0, b0 = 8192, c0 = 16384;
  DeviceMemory dram(32768, 0);
  std::vector<double> a(static_cast<size_t>(c.m * c.k)), b(static_cast<size_t>(c.k * c.n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i)) * 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11 * static_cast<double>(i)) - 0.25;
  put(dram, a0, DType::F16, a);
  put(dram, b0, DType::F16, b);
  const int ldb = c.trans_b ? c.k : c.n;
  const std::string mm = " a=0 b=8192 c=16384 m=" + std::to_string(c.m) +
                         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                         " lda=" + std::to_string(c.k) + " ldb=" + std::to_string(ldb) +
                         " ldc=" + std::to_string(c.n) + " dt=f16";
  const int flags = c.trans_b ? 2 : 0;
  auto p = test::program(1,
                         ".core 0\n"
                         "  dma.load dram=0 lx=0 bytes=16384\n"
                         "  sync.sig q=dma_in tok=0\n"
                         "  sync.wait q=pt1 tok=0\n"
                         "  pt.mm cl=1" +
                             mm + " flags=" + std::to_string(flags) +
                             "\n"
                             "  pt.mm cl=1" +
                             mm + " flags=" + std::to_string(flags | 1) +
                             "\n"
                             "  sync.sig q=pt1 tok=1\n"
                             "  sync.wait q=dma_out tok=1\n"
                             "  dma.store lx=16384 dram=16384 bytes=16384\n"
                             "  halt\n",
                         32768);
  simulate(p, test::config(1), dram);
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      float acc = 0;  // reference: fp32 accumulation, kk ascending, twice (flags bit 0)
      for (int pass = 0; pass < 2; ++pass)
        for (int kk = 0; kk < c.k; ++kk) {
          float av =
              static_cast<float>(get(dram, a0, DType::F16, static_cast<size_t>(i * c.k + kk)));
          size_t bi = static_cast<size_t>(c.trans_b ? j * ldb + kk : kk * ldb + j);
          float bv = static_cast<float>(get(dram, b0, DType::F16, bi));
          acc += av * bv;
        }
      ASSERT_EQ(static_cast<float>(get(dram, c0, DType::F32, static_cast<size_t>(i * c.n + j))),
                acc)
          << "C(" << i << "," << j << ")";
    }
}

TEST(PtFunctional, F16MatmulAccumulatesInF32LikeTheReferenceLoop) {
  check_matmul({5, 7, 9, false});
}
TEST(PtFunctional, TransposedBReadsColumnsOfTheStoredRows) { check_matmul({9, 3, 17, true}); }

TEST(SfpFunctional, BinaryBroadcastsAStrideOfZero) {
  DeviceMemory m(kImage, 0);
  put(m, 0, DType::F32, {1, 2, 3, 4, 5, 6});  // a: 2x3
  put(m, 64, DType::F32, {10, 20, 30});       // a row, broadcast over rows
  put(m, 96, DType::F32, {100, 200});         // a column, broadcast over columns
  auto out = run_sfp(m,
                     "  sfp.bin cl=0 fn=add dt=f32 dst=128 dst_rs=3 dst_cs=1 a=0 a_rs=3 a_cs=1 "
                     "b=64 b_rs=0 b_cs=1 rows=2 cols=3\n"
                     "  sfp.bin cl=0 fn=mul dt=f32 dst=256 dst_rs=3 dst_cs=1 a=0 a_rs=3 a_cs=1 "
                     "b=96 b_rs=1 b_cs=0 rows=2 cols=3\n"
                     "  sfp.bin cl=0 fn=div dt=f32 dst=384 dst_rs=3 dst_cs=1 a=0 a_rs=3 a_cs=1 "
                     "b=64 b_rs=0 b_cs=1 rows=2 cols=3");
  const double add[] = {11, 22, 33, 14, 25, 36}, mul[] = {100, 200, 300, 800, 1000, 1200};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(get(out, 128, DType::F32, i), add[i]);
    EXPECT_EQ(get(out, 256, DType::F32, i), mul[i]);
    EXPECT_EQ(
        get(out, 384, DType::F32, i),
        static_cast<float>((static_cast<double>(i) + 1) / (10.0 * static_cast<double>(i % 3 + 1))));
  }
}

TEST(SfpFunctional, CompareWritesBoolAndSelectPicksByIt) {
  DeviceMemory m(kImage, 0);
  put(m, 0, DType::F16, {1, 5, -2, 7});
  put(m, 64, DType::F16, {3, 3, 3, 3});
  auto out = run_sfp(m,
                     "  sfp.bin cl=0 fn=gt dt=f16 dst=128 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 b=64 "
                     "b_rs=4 b_cs=1 rows=1 cols=4\n"
                     "  sfp.sel cl=0 dt=f16 dst=256 dst_rs=4 dst_cs=1 c=128 c_rs=4 c_cs=1 a=0 "
                     "a_rs=4 a_cs=1 b=64 b_rs=4 b_cs=1 rows=1 cols=4");
  const uint8_t gt[] = {0, 1, 0, 1};
  const double sel[] = {3, 5, 3, 7};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[128 + i], gt[i]);
    EXPECT_EQ(get(out, 256, DType::F16, i), sel[i]);
  }
}

TEST(SfpFunctional, ReductionsOverColumnsWithAccumulate) {
  DeviceMemory m(kImage, 0);
  put(m, 0, DType::F32, {1, -2, 3, 4, 5, -6});  // 2x3
  auto out = run_sfp(
      m,
      "  sfp.red cl=0 fn=sum dt=f32 dst=128 dst_rs=1 a=0 a_rs=3 a_cs=1 rows=2 cols=3\n"
      "  sfp.red cl=0 fn=sum dt=f32 dst=128 dst_rs=1 a=0 a_rs=3 a_cs=1 rows=2 cols=3 acc=1\n"
      "  sfp.red cl=0 fn=rmax dt=f32 dst=256 dst_rs=2 a=0 a_rs=3 a_cs=1 rows=2 cols=3\n"
      "  sfp.red cl=0 fn=rmin dt=f32 dst=512 dst_rs=1 a=0 a_rs=1 a_cs=3 rows=3 cols=2\n"
      "  sfp.red cl=0 fn=prod dt=f32 dst=640 dst_rs=1 a=0 a_rs=3 a_cs=1 rows=2 cols=3");
  EXPECT_EQ(get(out, 128, DType::F32, 0), 4);  // 2 * (1 - 2 + 3)
  EXPECT_EQ(get(out, 128, DType::F32, 1), 6);  // 2 * (4 + 5 - 6)
  EXPECT_EQ(get(out, 256, DType::F32, 0), 3);  // dst_rs = 2 elements
  EXPECT_EQ(get(out, 256, DType::F32, 2), 5);
  EXPECT_EQ(get(out, 512, DType::F32, 0), 1);   // columns of a (cs = 3): min(1, 4)
  EXPECT_EQ(get(out, 512, DType::F32, 1), -2);  // min(-2, 5)
  EXPECT_EQ(get(out, 512, DType::F32, 2), -6);  // min(3, -6)
  EXPECT_EQ(get(out, 640, DType::F32, 0), -6);
  EXPECT_EQ(get(out, 640, DType::F32, 1), -120);
}

TEST(SfpFunctional, ConvertFillAndTranscendentals) {
  DeviceMemory m(kImage, 0);
  put(m, 0, DType::F32, {3.14159265, -0.5, 70000.0, 1.0});
  auto out = run_sfp(
      m,
      "  sfp.cvt cl=0 sdt=f32 ddt=f16 dst=128 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 rows=1 cols=4\n"
      "  sfp.cvt cl=0 sdt=f32 ddt=i8 dst=192 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 rows=1 cols=4\n"
      "  sfp.fill cl=0 dt=bf16 dst=256 dst_rs=2 dst_cs=1 rows=2 cols=2 value=1.5\n"
      "  sfp.un cl=0 fn=exp dt=f32 dst=320 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 rows=1 cols=2\n"
      "  sfp.un cl=0 fn=sigmoid dt=f32 dst=352 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 rows=1 cols=2\n"
      "  sfp.un cl=0 fn=rsqrt dt=f32 dst=384 dst_rs=4 dst_cs=1 a=0 a_rs=4 a_cs=1 rows=1 cols=1");
  EXPECT_EQ(get(out, 128, DType::F16, 0), isa::f16_to_f32(isa::f32_to_f16(3.14159265f)));
  EXPECT_EQ(get(out, 128, DType::F16, 1), -0.5);
  EXPECT_TRUE(std::isinf(get(out, 128, DType::F16, 2)));  // beyond f16 range
  EXPECT_EQ(get(out, 192, DType::I8, 0), 3);
  EXPECT_EQ(get(out, 192, DType::I8, 2), 127);  // saturates
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(get(out, 256, DType::BF16, i), 1.5);
  const double x0 = static_cast<float>(3.14159265);
  EXPECT_EQ(get(out, 320, DType::F32, 0), static_cast<float>(std::exp(x0)));
  EXPECT_EQ(get(out, 352, DType::F32, 1), static_cast<float>(1.0 / (1.0 + std::exp(0.5))));
  EXPECT_EQ(get(out, 384, DType::F32, 0), static_cast<float>(1.0 / std::sqrt(x0)));
}

TEST(RingFunctional, SendCopiesIntoTheOtherCoresLxAndSignalsIt) {
  // core 0 loads 256 B, sends them to core 1's LX at 1024 with token 3; core 1 waits on it
  // in its dma_out queue and stores them to DRAM 4096.
  DeviceMemory dram(8192, 0);
  for (int i = 0; i < 256; ++i) dram[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 7);
  auto p = test::program(2, R"(.core 0
  dma.load dram=0 lx=0 bytes=256
  sync.sig q=dma_in tok=0
  sync.wait q=ring tok=0
  ring.send src=0 dst_core=1 dst=1024 bytes=256 tok=3
  halt
.core 1
  sync.wait q=dma_out tok=3
  dma.store lx=1024 dram=4096 bytes=256
  halt)",
                         8192);
  simulate(p, test::config(2), dram);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(dram[static_cast<size_t>(4096 + i)], static_cast<uint8_t>(i * 7));
}

}  // namespace
}  // namespace spyre::sim

namespace spyre::sim {
namespace {

TEST(PtFunctional, Int8ProductsAccumulateExactly) {
  // A i8 [2,3] at 0, B i8 [3,2] at 64, C f32 [2,2] at 128 (all within the 4096 B image).
  DeviceMemory m(kImage, 0);
  put(m, 0, DType::I8, {1, -2, 3, 127, 127, -128});
  put(m, 64, DType::I8, {4, 5, 6, -7, 100, 9});
  auto p = test::program(1, R"(.core 0
  dma.load dram=0 lx=0 bytes=4096
  sync.sig q=dma_in tok=0
  sync.wait q=pt0 tok=0
  pt.mm cl=0 a=0 b=64 c=128 m=2 n=2 k=3 lda=3 ldb=2 ldc=2 dt=i8
  sync.sig q=pt0 tok=1
  sync.wait q=dma_out tok=1
  dma.store lx=0 dram=0 bytes=4096
  halt)",
                         kImage);
  simulate(p, test::config(1), m);
  EXPECT_EQ(get(m, 128, DType::F32, 0), 1 * 4 - 2 * 6 + 3 * 100);
  EXPECT_EQ(get(m, 128, DType::F32, 1), 1 * 5 + 2 * 7 + 3 * 9);
  EXPECT_EQ(get(m, 128, DType::F32, 2), 127 * 4 + 127 * 6 - 128 * 100);
  EXPECT_EQ(get(m, 128, DType::F32, 3), 127 * 5 - 127 * 7 - 128 * 9);
}

}  // namespace
}  // namespace spyre::sim
