// SFP timing: lanes per dtype, the latency / cycles-per-vector table per op class, the lane
// tree of reductions and conversions. Expected counts are arithmetic in the comments
// (formulas in spyre/arch/unit_timing.h).
#include <gtest/gtest.h>

#include <string>

#include "sim_test_util.h"
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

}  // namespace
}  // namespace spyre::sim
