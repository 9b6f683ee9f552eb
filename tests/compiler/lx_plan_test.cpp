// The report's LX plan (`lx_plan`, lx_plan.h): per-core live intervals that match the program,
// buffers that never share bytes while live, and the planted defects of compiler.debug.*.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/isa/loops.h"

namespace spyre::compiler {
namespace {

CompileResult compile_mlp(const std::string& arch, const CompileOptions& o = {}) {
  return compile(test::load_golden("mlp_block"), arch::load_arch(arch), o, "mlp_block.json");
}

TEST(LxPlan, IntervalsCoverExactlyTheKernelsInstructionsOnEachCore) {
  const CompileResult r = compile_mlp("tiny");
  const auto& plan = r.report["lx_plan"];
  ASSERT_EQ(plan["format"], "spyre-lx-plan/1");
  ASSERT_FALSE(plan["buffers"].empty());
  for (const auto& b : plan["buffers"]) {
    const auto id = b["kernel_id"].get<uint16_t>();
    // A buffer kept in LX across kernels (`resident`) lives until its last reader's end.
    const auto last = b.contains("last_kernel_id") ? b["last_kernel_id"].get<uint16_t>() : id;
    EXPECT_EQ(r.program.kernels.at(id), b["kernel"]);
    ASSERT_FALSE(b["live"].empty()) << b.dump();
    for (const auto& l : b["live"]) {
      // Intervals count dynamic indices: positions in the expanded stream.
      const auto code = isa::expand_stream(r.program.cores.at(l[0].get<size_t>()));
      const auto lo = l[1].get<size_t>(), hi = l[2].get<size_t>();
      ASSERT_LT(hi, code.size());
      for (size_t pc = lo; pc <= hi; ++pc) {
        EXPECT_GE(code[pc].kernel, id) << "pc " << pc;
        EXPECT_LE(code[pc].kernel, last) << "pc " << pc;
      }
      // The interval ends at the kernel's barrier (halt for the last) and starts right after
      // the previous kernel's.
      EXPECT_TRUE(code[hi].op == isa::Opcode::Barrier || code[hi].op == isa::Opcode::Halt);
      if (lo > 0) {
        EXPECT_NE(code[lo - 1].kernel, id);
      }
      EXPECT_EQ(code[hi].kernel, last) << b.dump();
    }
  }
}

TEST(LxPlan, LiveBuffersOfAKernelNeverShareBytesAndFit) {
  const CompileResult r = compile_mlp("spyre");
  const auto& plan = r.report["lx_plan"];
  const auto& bufs = plan["buffers"];
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      if (bufs[i]["kernel_id"] != bufs[j]["kernel_id"]) continue;
      const int64_t a = bufs[i]["offset"], ae = a + bufs[i]["bytes"].get<int64_t>();
      const int64_t b = bufs[j]["offset"], be = b + bufs[j]["bytes"].get<int64_t>();
      EXPECT_TRUE(ae <= b || be <= a) << bufs[i].dump() << " " << bufs[j].dump();
    }
  EXPECT_TRUE(plan["fits"].get<bool>());
  ASSERT_EQ(plan["peak"].size(), 32u);
  for (const auto& p : plan["peak"]) {
    EXPECT_LE(p["high_water"].get<int64_t>(), plan["usable_bytes"].get<int64_t>());
    EXPECT_LE(p["bytes"].get<int64_t>(), p["high_water"].get<int64_t>());
  }
  // Every kernel's buffers are in the plan with the offsets of its own `lx.plan`.
  size_t n = 0;
  for (const auto& k : r.report["kernels"]) n += k["lx"]["plan"].size();
  EXPECT_EQ(n, bufs.size());
}

TEST(LxPlan, PlantedReportErrorsChangeTheClaimNotTheCode) {
  const CompileResult good = compile_mlp("tiny");
  for (const char* kind : {"shift", "shrink"}) {
    CompileOptions o;
    o.set("debug.lx_plan_error", kind);
    const CompileResult bad = compile_mlp("tiny", o);
    EXPECT_EQ(bad.program, good.program) << kind;
    EXPECT_EQ(bad.report["options"]["debug"]["lx_plan_error"], kind);
    const auto& gb = good.report["lx_plan"]["buffers"];
    const auto& bb = bad.report["lx_plan"]["buffers"];
    ASSERT_EQ(gb.size(), bb.size());
    bool differs = false;
    for (size_t i = 0; i < gb.size(); ++i)
      differs = differs || gb[i]["offset"] != bb[i]["offset"] || gb[i]["bytes"] != bb[i]["bytes"];
    EXPECT_TRUE(differs) << kind;
  }
}

TEST(LxPlan, PlantedOverlapPutsTwoLiveBuffersOnTheSameBytes) {
  CompileOptions o;
  o.set("debug.lx_plan_error", "overlap");
  const CompileResult r = compile_mlp("tiny", o);
  for (const auto& k : r.report["kernels"]) {
    const auto& p = k["lx"]["plan"];
    if (p.size() < 2) continue;
    EXPECT_EQ(p[0]["offset"], p[1]["offset"]) << k["name"];
  }
}

// mlp_block on tiny with a K split and slow transcendentals: the K chain's last core would run
// the whole GELU epilogue, so the cost model rejects op4+op5 (decision 2); forcing takes it.
TEST(LxPlan, ForceFusionTakesADecisionTheCostModelRejected) {
  const auto cfg = arch::load_arch("tiny", {"sfp.transcendental_factor=50"});
  CompileOptions o;
  o.set("matmul_split", "1,1,1,4");
  const auto ir = test::load_golden("mlp_block");
  const CompileResult honest = compile(ir, cfg, o, "mlp_block.json");
  const auto& d = honest.report["fusion"].at(2);
  ASSERT_EQ(d["group"], (nlohmann::json{"op4", "op5"}));
  ASSERT_FALSE(d["taken"].get<bool>()) << d.dump();
  ASSERT_FALSE(d["predicted"]["after"].is_null());
  o.set("debug.force_fusion", "2");
  const CompileResult forced = compile(ir, cfg, o, "mlp_block.json");
  const auto& f = forced.report["fusion"].at(2);
  EXPECT_TRUE(f["taken"].get<bool>());
  EXPECT_TRUE(f["forced"].get<bool>());
  EXPECT_EQ(forced.report["kernels"].size() + 1, honest.report["kernels"].size());
  EXPECT_EQ(forced.report["options"]["debug"]["force_fusion"], (nlohmann::json{2}));
}

TEST(LxPlan, DebugOptionsRejectBadValues) {
  CompileOptions o;
  EXPECT_THROW(o.set("debug.lx_plan_error", "sideways"), Error);
  EXPECT_THROW(o.set("debug.force_fusion", "1,x"), Error);
  EXPECT_THROW(o.set("debug.force_fusion", "-1"), Error);
  o.set("debug.force_fusion", "2,0");
  EXPECT_EQ(o.debug.force_fusion, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(o.debug.forces(0) && o.debug.forces(2) && !o.debug.forces(1));
  o.set("debug.force_fusion", "all");
  EXPECT_TRUE(o.debug.forces(7));
  o.set("debug.force_fusion", "none");
  EXPECT_FALSE(o.debug.forces(0));
}

}  // namespace
}  // namespace spyre::compiler
