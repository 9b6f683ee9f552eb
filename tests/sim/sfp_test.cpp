// SFP timing: lanes per dtype, the latency / cycles-per-vector table per op class, the lane
// tree of reductions and conversions. Expected counts are arithmetic in the comments
// (formulas in spyre/arch/unit_timing.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "sim_test_util.h"
#include "spyre/error.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

using test::busy;
using test::config;
using test::program;

// The SFP busy cycles of one instruction (`body` without the corelet) run alone on sfp0.
uint64_t sfp_busy(const arch::ArchConfig& cfg, const std::string& body) {
  SimOptions o;
  o.functional = false;
  auto r = test::run(program(1, ".core 0\n  " + body + "\n  halt\n"), cfg, o);
  EXPECT_EQ(r.cycles, 1u + busy(r, 0, "sfp0")) << body;  // issue + SFP
  return busy(r, 0, "sfp0");
}

std::string un(const char* fn, const char* dt, int rows, int cols) {
  const std::string rs = std::to_string(cols);
  return std::string("sfp.un cl=0 fn=") + fn + " dt=" + dt + " dst=0 dst_rs=" + rs +
         " dst_cs=1 a=65536 a_rs=" + rs + " a_cs=1 rows=" + std::to_string(rows) +
         " cols=" + std::to_string(cols);
}
std::string bin(const char* fn, const char* dt, int rows, int cols) {
  const std::string rs = std::to_string(cols);
  return std::string("sfp.bin cl=0 fn=") + fn + " dt=" + dt + " dst=0 dst_rs=" + rs +
         " dst_cs=1 a=65536 a_rs=" + rs + " a_cs=1 b=131072 b_rs=" + rs +
         " b_cs=1 rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
}
std::string red(const char* fn, const char* dt, int rows, int cols) {
  return std::string("sfp.red cl=0 fn=") + fn + " dt=" + dt +
         " dst=0 dst_rs=1 a=65536 a_rs=" + std::to_string(cols) +
         " a_cs=1 rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
}

TEST(Sfp, LanesPerElementSize) {
  auto cfg = config();
  // copy on 4x100 = 400 elements, latency 8, 1 cycle per vector:
  // i8 64 lanes: 8 + ceil(400/64) = 15; f16 64: 15; f32 32: 8 + 13 = 21; i64 16: 8 + 25 = 33.
  EXPECT_EQ(sfp_busy(cfg, un("copy", "i8", 4, 100)), 15u);
  EXPECT_EQ(sfp_busy(cfg, un("copy", "f16", 4, 100)), 15u);
  EXPECT_EQ(sfp_busy(cfg, un("copy", "bf16", 4, 100)), 15u);
  EXPECT_EQ(sfp_busy(cfg, un("copy", "f32", 4, 100)), 21u);
  EXPECT_EQ(sfp_busy(cfg, un("copy", "i64", 4, 100)), 33u);
  // sfp.lanes_8bit = 128: i8 8 + ceil(400/128) = 12.
  cfg.sfp_lanes_8bit = 128;
  EXPECT_EQ(sfp_busy(cfg, un("copy", "i8", 4, 100)), 12u);
}

TEST(Sfp, LatencyAndCyclesPerVectorPerOpClass) {
  auto cfg = config();
  cfg.sfp_latency_cycles = 3;
  cfg.sfp_simple_cycles_per_vector = 1;
  cfg.sfp_transcendental_latency_cycles = 20;
  cfg.sfp_transcendental_factor = 4;
  cfg.sfp_compare_latency_cycles = 5;
  cfg.sfp_compare_cycles_per_vector = 2;
  cfg.sfp_convert_latency_cycles = 6;
  cfg.sfp_convert_cycles_per_vector = 3;
  // f16 4x100: 7 vectors of 64 lanes.
  EXPECT_EQ(sfp_busy(cfg, bin("add", "f16", 4, 100)), 3u + 7u * 1u);   // simple: 10
  EXPECT_EQ(sfp_busy(cfg, un("exp", "f16", 4, 100)), 20u + 7u * 4u);   // transcendental: 48
  EXPECT_EQ(sfp_busy(cfg, bin("div", "f16", 4, 100)), 20u + 7u * 4u);  // div is transcendental
  EXPECT_EQ(sfp_busy(cfg, bin("lt", "f16", 4, 100)), 5u + 7u * 2u);    // compare: 19
  // cvt f16 -> f32 runs at the wider type's 32 lanes: 6 + ceil(400/32) * 3 = 6 + 39 = 45.
  EXPECT_EQ(sfp_busy(cfg,
                     "sfp.cvt cl=0 sdt=f16 ddt=f32 dst=0 dst_rs=100 dst_cs=1 a=65536 "
                     "a_rs=100 a_cs=1 rows=4 cols=100"),
            45u);
  // sel and fill are simple: 3 + 7 = 10.
  EXPECT_EQ(sfp_busy(cfg,
                     "sfp.sel cl=0 dt=f16 dst=0 dst_rs=100 dst_cs=1 c=65536 c_rs=100 "
                     "c_cs=1 a=131072 a_rs=100 a_cs=1 b=196608 b_rs=100 b_cs=1 rows=4 "
                     "cols=100"),
            10u);
  EXPECT_EQ(sfp_busy(cfg,
                     "sfp.fill cl=0 dt=f16 dst=0 dst_rs=100 dst_cs=1 rows=4 cols=100 "
                     "value=1.5"),
            10u);
  // simple cycles per vector 2: 3 + 7 * 2 = 17.
  cfg.sfp_simple_cycles_per_vector = 2;
  EXPECT_EQ(sfp_busy(cfg, un("relu", "f16", 4, 100)), 17u);
}

TEST(Sfp, ReductionAddsALogDepthLaneTreeOnce) {
  auto cfg = config();
  // sum f16 4x100: a row fills ceil(100/64) = 2 vectors, 4 rows = 8 vectors; the lanes of a
  // row meet in a tree of ceil(log2(64)) = 6 levels: 8 + 8 + 6 = 22.
  EXPECT_EQ(sfp_busy(cfg, red("sum", "f16", 4, 100)), 22u);
  // rmax f32 16x8: 8 < 32 lanes, floor(32/8) = 4 rows share a vector: ceil(16/4) = 4 vectors;
  // tree ceil(log2(8)) = 3: 8 + 4 + 3 = 15.
  EXPECT_EQ(sfp_busy(cfg, red("rmax", "f32", 16, 8)), 15u);
  // sum f16 10x5: floor(64/5) = 12 rows per vector, 1 vector; tree ceil(log2(5)) = 3: 12.
  EXPECT_EQ(sfp_busy(cfg, red("sum", "f16", 10, 5)), 12u);
  // prod f16 3x1: one vector, no tree: 8 + 1 = 9.
  EXPECT_EQ(sfp_busy(cfg, red("prod", "f16", 3, 1)), 9u);
  // The table: latency 2, 3 cycles per vector, 2 cycles per tree level:
  // sum f16 4x100: 2 + 8*3 + 6*2 = 38.
  cfg.sfp_reduce_latency_cycles = 2;
  cfg.sfp_reduce_cycles_per_vector = 3;
  cfg.sfp_reduce_stage_cycles = 2;
  EXPECT_EQ(sfp_busy(cfg, red("sum", "f16", 4, 100)), 38u);
}

TEST(Sfp, EmptyTileTakesNoTime) {
  // rows*cols = 0: no vectors and no pipeline to fill.
  EXPECT_EQ(
      sfp_cycles(config(),
                 program(1, ".core 0\n  " + un("relu", "f16", 0, 64) + "\n  halt\n").cores[0][0]),
      0u);
}

// sfp.cvt to and from fp8 (e4m3: nearest even, saturating to +-448, NaN kept) and int4
// (truncating toward zero, saturating to [-8, 7]; two per byte, low nibble first; rows start
// on a byte, so rs is even). Lanes by the wider type, int4 and fp8 at sfp.lanes_8bit.
TEST(Sfp, ConvertsToAndFromFp8AndInt4) {
  auto cfg = config();
  cfg.sfp_convert_latency_cycles = 6;
  cfg.sfp_convert_cycles_per_vector = 3;
  cfg.sfp_lanes_8bit = 128;
  auto cvt = [](const char* sdt, const char* ddt, int rows, int cols, int rs) {
    const std::string r = std::to_string(rs);
    return std::string("sfp.cvt cl=0 sdt=") + sdt + " ddt=" + ddt + " dst=0 dst_rs=" + r +
           " dst_cs=1 a=65536 a_rs=" + r + " a_cs=1 rows=" + std::to_string(rows) +
           " cols=" + std::to_string(cols);
  };
  // 4x100 = 400 elements: f16 -> i4 at the 64 fp16 lanes: 6 + ceil(400/64) * 3 = 6 + 21 = 27;
  // f8e4m3 -> i4 at 128 8-bit lanes: 6 + ceil(400/128) * 3 = 18; f32 -> f8e4m3 at 32 lanes:
  // 6 + ceil(400/32) * 3 = 45.
  EXPECT_EQ(sfp_busy(cfg, cvt("f16", "i4", 4, 100, 100)), 27u);
  EXPECT_EQ(sfp_busy(cfg, cvt("f8e4m3", "i4", 4, 100, 100)), 18u);
  EXPECT_EQ(sfp_busy(cfg, cvt("f32", "f8e4m3", 4, 100, 100)), 45u);

  auto instr = [](const std::string& body) {
    return program(1, ".core 0\n  " + body + "\n  halt\n").cores[0][0];
  };
  std::vector<uint8_t> lx(1 << 18, 0);
  const double src[9] = {
      1.0, 448.0, 500.0, -1e9, NAN, std::ldexp(1.0, -10), std::ldexp(3.0, -10), 1.0625, -3.3};
  for (int i = 0; i < 9; ++i)
    isa::store_element(lx.data() + 65536 + 4 * i, isa::DType::F32, src[i]);
  sfp_execute(lx.data(), instr(cvt("f32", "f8e4m3", 1, 9, 9)));
  const uint8_t want8[9] = {0x38, 0x7e, 0x7e, 0xfe, 0x7f, 0x00, 0x02, 0x38, 0xc5};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(lx[i], want8[i]) << i;  // -3.3 -> -3.25 = 0xc5
  // ... and back: f8e4m3 -> f32 is exact.
  std::memcpy(lx.data() + 65536, lx.data(), 9);
  sfp_execute(lx.data(), instr(cvt("f8e4m3", "f32", 1, 9, 9)));
  EXPECT_EQ(isa::load_element(lx.data() + 4 * 2, isa::DType::F32), 448.0);
  EXPECT_EQ(isa::load_element(lx.data() + 4 * 8, isa::DType::F32), -3.25);
  EXPECT_TRUE(std::isnan(isa::load_element(lx.data() + 4 * 4, isa::DType::F32)));

  // f16 -> i4, 2 rows of 5 with rs = 6: row 1 starts at element 6 = byte 3; the nibble of
  // element 5 (between the rows) keeps its old value.
  std::fill(lx.begin(), lx.end(), 0);
  lx[2] = 0xf0;
  const double v[2][5] = {{3.7, -2.2, 9.0, -100.0, NAN}, {0.5, -0.5, 7.0, -8.0, 1.0}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c)
      isa::store_element(lx.data() + 65536 + 2 * (r * 6 + c), isa::DType::F16, v[r][c]);
  sfp_execute(lx.data(), instr(cvt("f16", "i4", 2, 5, 6)));
  // row 0: 3, -2, 7, -8, 0 -> bytes 0xe3, 0x87, 0xf0 (low nibble 0, high nibble untouched);
  // row 1: 0, 0, 7, -8, 1 -> 0x00, 0x87, 0x01.
  const uint8_t want4[6] = {0xe3, 0x87, 0xf0, 0x00, 0x87, 0x01};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(lx[i], want4[i]) << i;
  // i4 -> f32 reads the nibbles back.
  std::memcpy(lx.data() + 65536, lx.data(), 6);
  sfp_execute(lx.data(), instr(cvt("i4", "f32", 2, 5, 6)));
  EXPECT_EQ(isa::load_element(lx.data() + 4 * 1, isa::DType::F32), -2.0);
  EXPECT_EQ(isa::load_element(lx.data() + 4 * (6 + 3), isa::DType::F32), -8.0);
  EXPECT_EQ(isa::load_element(lx.data() + 4 * (6 + 4), isa::DType::F32), 1.0);
  // The i4 dst covers elements 0 .. 6 + 4 = 10: bytes [0, 6); the f16 source [65536, 65558).
  auto r = sfp_lx_ranges(instr(cvt("f16", "i4", 2, 5, 6)));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].lo, 0);
  EXPECT_EQ(r[0].hi, 6);
  EXPECT_EQ(r[1].hi, 65536 + 22);

  // i4 anywhere else, or an odd i4 row stride, is an error naming the instruction.
  try {
    instr(un("neg", "i4", 1, 8));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sfp.un"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("only by pt.mm and sfp.cvt"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(instr(cvt("f16", "i4", 2, 5, 5)), Error);
  // fp8 works in every SFP op (one byte per element, computed in double): 1.0 + 1.0625 = 2.0625
  // rounds to nearest even 2.0 (0x40).
  std::fill(lx.begin(), lx.end(), 0);
  lx[65536] = 0x38;
  lx[131072] = isa::f64_to_f8e4m3(1.0625);
  sfp_execute(lx.data(), instr(bin("add", "f8e4m3", 1, 1)));
  EXPECT_EQ(lx[0], 0x40);
}

// The functions added for PyTorch's op coverage, computed in f32 on a row of inputs against
// <cmath> (and the identities that define the ones <cmath> lacks).
TEST(Sfp, MathFunctionsMatchTheirDefinitions) {
  auto instr = [](const std::string& body) {
    return program(1, ".core 0\n  " + body + "\n  halt\n").cores[0][0];
  };
  std::vector<uint8_t> lx(1 << 18, 0);
  const std::vector<double> a = {-0.75, -0.0, 0.25, 0.5, 0.999, 3.5, -5.25};
  const std::vector<double> b = {2.0, -1.5, -0.5, 0.2, 1.0, -2.0, 2.0};
  const int n = static_cast<int>(a.size());
  auto load = [&](int base, const std::vector<double>& v) {
    for (int i = 0; i < n; ++i)
      isa::store_element(lx.data() + base + 4 * i, isa::DType::F32, v[static_cast<size_t>(i)]);
  };
  auto out = [&](int i) { return isa::load_element(lx.data(), isa::DType::F32, i); };
  load(65536, a);
  load(131072, b);
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const std::vector<std::pair<const char*, double (*)(double)>> unary = {
      {"expm1", [](double x) { return std::expm1(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"exp2", [](double x) { return std::exp2(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"asin", [](double x) { return std::asin(x); }},
      {"atanh", [](double x) { return std::atanh(x); }},
      {"erfc", [](double x) { return std::erfc(x); }},
      {"lgamma", [](double x) { return std::lgamma(x); }}};
  for (const auto& [fn, ref] : unary) {
    sfp_execute(lx.data(), instr(un(fn, "f32", 1, n)));
    for (int i = 0; i < n; ++i) {
      const double want = f32(ref(f32(a[static_cast<size_t>(i)])));  // of the f32 input
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out(i))) << fn << " " << i;
      } else {
        EXPECT_EQ(out(i), want) << fn << " of " << a[static_cast<size_t>(i)];
      }
    }
  }
  // erfinv inverts erf to within the f32 result's rounding; +-inf at +-1, NaN outside.
  sfp_execute(lx.data(), instr(un("erfinv", "f32", 1, n)));
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(std::erf(out(i)), f32(a[static_cast<size_t>(i)]), 2e-7) << i;
  EXPECT_TRUE(std::isnan(out(5)));
  isa::store_element(lx.data() + 65536, isa::DType::F32, 1.0);
  sfp_execute(lx.data(), instr(un("erfinv", "f32", 1, 1)));
  EXPECT_EQ(out(0), std::numeric_limits<double>::infinity());
  load(65536, a);
  // signbit sees -0; remainder takes the divisor's sign, fmod the dividend's; xor is logical.
  sfp_execute(lx.data(), instr(un("signbit", "f32", 1, n)));
  EXPECT_EQ(out(0), 1.0);
  EXPECT_EQ(out(1), 1.0);  // -0.0
  EXPECT_EQ(out(2), 0.0);
  sfp_execute(lx.data(), instr(bin("remainder", "f32", 1, n)));
  EXPECT_EQ(out(0), 1.25);  // -0.75 mod 2
  EXPECT_EQ(out(5), -0.5);  // 3.5 mod -2
  EXPECT_EQ(out(6), 0.75);  // -5.25 mod 2
  sfp_execute(lx.data(), instr(bin("fmod", "f32", 1, n)));
  EXPECT_EQ(out(0), -0.75);
  EXPECT_EQ(out(5), 1.5);
  EXPECT_EQ(out(6), -1.25);
  sfp_execute(lx.data(), instr(bin("atan2", "f32", 1, n)));
  EXPECT_EQ(out(3), f32(std::atan2(0.5, 0.2)));
  sfp_execute(lx.data(), instr(bin("hypot", "f32", 1, n)));
  EXPECT_EQ(out(5), f32(std::hypot(3.5, -2.0)));
  sfp_execute(lx.data(), instr(bin("copysign", "f32", 1, n)));
  EXPECT_EQ(out(0), 0.75);
  EXPECT_EQ(out(2), -0.25);
  sfp_execute(lx.data(), instr(bin("xor", "f32", 1, n)));
  EXPECT_EQ(out(0), 0.0);  // both nonzero
  EXPECT_EQ(out(1), 1.0);  // -0 is zero, -1.5 is not
  sfp_execute(lx.data(), instr(bin("floordiv", "f32", 1, n)));
  EXPECT_EQ(out(0), -1.0);  // floor(-0.75 / 2)
  EXPECT_EQ(out(5), -2.0);  // floor(3.5 / -2)

  // The special functions: parity, torch's edge values and known values.
  auto un1 = [&](const char* fn, double x) {
    isa::store_element(lx.data() + 65536, isa::DType::F32, x);
    sfp_execute(lx.data(), instr(un(fn, "f32", 1, 1)));
    return out(0);
  };
  EXPECT_EQ(un1("i0", -1.5), f32(std::cyl_bessel_i(0.0, 1.5)));
  EXPECT_EQ(un1("i1", -1.5), f32(-std::cyl_bessel_i(1.0, 1.5)));
  EXPECT_EQ(un1("bessel_j1", -2.0), f32(-std::cyl_bessel_j(1.0, 2.0)));
  EXPECT_EQ(un1("bessel_y0", 0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(un1("bessel_y1", -1.0)));
  EXPECT_EQ(un1("bessel_k0", 0.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(un1("bessel_k1e", 2.0), f32(std::exp(2.0) * std::cyl_bessel_k(1.0, 2.0)));
  EXPECT_EQ(un1("sph_bessel_j0", 0.0), 1.0);
  EXPECT_NEAR(un1("digamma", 1.0), -0.5772156649015329, 1e-7);  // -Euler's gamma
  EXPECT_NEAR(un1("digamma", -0.5), 0.03648997397857652, 1e-7);
  EXPECT_EQ(un1("digamma", 0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(un1("digamma", -2.0)));
  EXPECT_NEAR(un1("ndtri", 0.975), 1.959963984540054, 1e-6);
  EXPECT_NEAR(un1("erfcx", 30.0), 0.01879588886141675, 1e-9);  // scipy.special.erfcx(30)
  EXPECT_NEAR(un1("erfcx", 1.0), std::exp(1.0) * std::erfc(1.0), 1e-7);
}

TEST(Sfp, IntegerShiftsFollowTorch) {
  auto instr = [](const std::string& body) {
    return program(1, ".core 0\n  " + body + "\n  halt\n").cores[0][0];
  };
  std::vector<uint8_t> lx(1 << 18, 0);
  const int32_t a[4] = {5, -8, 1, -1}, b[4] = {2, 1, 40, 70};
  for (int i = 0; i < 4; ++i) {
    isa::store_element(lx.data() + 65536, isa::DType::I32, i, a[i]);
    isa::store_element(lx.data() + 131072, isa::DType::I32, i, b[i]);
  }
  auto at = [&](int i) { return isa::load_element(lx.data(), isa::DType::I32, i); };
  sfp_execute(lx.data(), instr(bin("shl", "i32", 1, 4)));
  EXPECT_EQ(at(0), 20.0);
  EXPECT_EQ(at(1), -16.0);
  EXPECT_EQ(at(2), 0.0);  // 40 >= 32 bits of an int32
  EXPECT_EQ(at(3), 0.0);
  sfp_execute(lx.data(), instr(bin("shr", "i32", 1, 4)));
  EXPECT_EQ(at(0), 1.0);
  EXPECT_EQ(at(1), -4.0);  // arithmetic
  EXPECT_EQ(at(3), -1.0);  // a negative value shifted out
}

}  // namespace
}  // namespace spyre::sim
