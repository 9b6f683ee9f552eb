// Compiling the golden captures: valid programs, balanced tokens, LX within budget, a report
// that explains each kernel, and errors that name the node for what is not supported.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/isa/loops.h"

namespace spyre::compiler {
namespace {

struct Case {
  const char* ir;
  const char* arch;
  bool fusion = true;
};

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, CompilesToAValidProgramWithinLx) {
  const Case c = GetParam();
  auto cfg = arch::load_arch(c.arch);
  auto ir = test::load_golden(c.ir);
  CompileOptions opts;
  opts.fusion = c.fusion;
  CompileResult r = compile(ir, cfg, opts, std::string(c.ir) + ".json");
  // One kernel per node unfused; fused, one per group, each naming its group.
  const size_t kernels = r.report["kernels"].size();
  if (!c.fusion) {
    EXPECT_EQ(kernels, ir["nodes"].size());
  }
  size_t nodes_covered = 0;
  for (const auto& k : r.report["kernels"]) nodes_covered += k["nodes"].size();
  EXPECT_EQ(nodes_covered, ir["nodes"].size());
  EXPECT_NO_THROW(isa::validate(r.program));
  EXPECT_EQ(r.program.num_cores, static_cast<uint32_t>(cfg.cores));
  EXPECT_EQ(r.program.kernels.size(), kernels);
  EXPECT_EQ(r.inputs.size(), ir["inputs"].size());
  EXPECT_EQ(r.outputs.size(), ir["outputs"].size());
  // Every signal has its wait: tokens are zero at each barrier (a kernel the LX plan lets start
  // without one shares its predecessor's stretch). Signals to other cores (sync.sig core=c,
  // dma.load mcast/mtok, ring.red/ring.send tok) count on the target core.
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> balance;  // (stretch, core, tok)
  const int dropped = r.report["lx_residency"]["barriers_dropped"].get<int>();
  for (size_t c = 0; c < r.program.cores.size(); ++c) {
    // What the sequencer issues: hardware loops expanded (isa/loops.h).
    const auto core = isa::expand_stream(r.program.cores[c], c);
    const auto self = static_cast<int64_t>(c);
    ASSERT_FALSE(core.empty());
    EXPECT_EQ(core.back().op, isa::Opcode::Halt);
    int barriers = 0;
    for (const auto& in : core) {
      const int64_t kid = barriers;  // the stretch between barriers
      if (in.op == isa::Opcode::Signal) {
        const int64_t to = in.get("core");
        ++balance[{kid, to < 0 ? self : to, in.get("tok")}];
      }
      if (in.op == isa::Opcode::Wait) --balance[{kid, self, in.get("tok")}];
      if (in.op == isa::Opcode::DmaLoad && in.get("mcast") != 0 && in.get("mtok") >= 0)
        for (int64_t t = 0; t < 64; ++t)
          if (t != self && (in.get("mcast") >> t & 1)) ++balance[{kid, t, in.get("mtok")}];
      if ((in.op == isa::Opcode::RingReduce || in.op == isa::Opcode::RingSend) &&
          in.get("tok") >= 0)
        ++balance[{kid, in.get("dst_core"), in.get("tok")}];
      if (in.op == isa::Opcode::Barrier || in.op == isa::Opcode::Halt) ++barriers;
      if (in.op == isa::Opcode::DmaLoad || in.op == isa::Opcode::DmaStore) {
        EXPECT_GE(in.get("lx"), 0);
        EXPECT_LE(in.get("lx") + in.get("bytes"), cfg.lx_size_bytes);
      }
    }
    EXPECT_EQ(barriers, static_cast<int>(kernels) - dropped);
  }
  for (const auto& [key, n] : balance)
    EXPECT_EQ(n, 0) << "stretch " << std::get<0>(key) << " core " << std::get<1>(key) << " token "
                    << std::get<2>(key);
  const auto& rep = r.report;
  ASSERT_EQ(rep["kernels"].size(), kernels);
  for (const auto& k : rep["kernels"]) {
    EXPECT_LE(k["lx"]["peak_bytes"].get<int64_t>(), cfg.lx_usable_bytes()) << k["name"];
    EXPECT_GT(k["predicted"]["cycles"].get<int64_t>(), 0) << k["name"];
    EXPECT_TRUE(k.contains("split")) << k["name"];
    EXPECT_TRUE(k["unit"] == "pt" || k["unit"] == "sfp") << k["name"];
  }
  EXPECT_GT(rep["totals"]["predicted_cycles"].get<int64_t>(), 0);
  // Every tensor lies inside the program's device memory (also checked by validate).
  for (const auto& t : r.program.tensors) EXPECT_LE(t.dram_addr + t.bytes, r.program.dram_bytes);
}

INSTANTIATE_TEST_SUITE_P(All, Golden,
                         ::testing::Values(Case{"matmul", "tiny"}, Case{"matmul", "spyre"},
                                           Case{"eltwise_chain", "tiny"},
                                           Case{"eltwise_chain", "spyre"},
                                           Case{"mlp_block", "tiny"}, Case{"mlp_block", "spyre"},
                                           Case{"mlp_block", "tiny", false},
                                           Case{"mlp_block", "spyre", false}),
                         [](const auto& info) {
                           return std::string(info.param.ir) + "_" + info.param.arch +
                                  (info.param.fusion ? "" : "_unfused");
                         });

TEST(Compile, MatmulUsesTransposedWeightsWithoutElementStridedDma) {
  auto cfg = arch::load_arch("spyre");
  CompileOptions unfused;
  unfused.fusion = false;
  CompileResult r = compile(test::load_golden("mlp_block"), cfg, unfused, "mlp_block.json");
  const auto& k = r.report["kernels"][3];
  EXPECT_EQ(k["name"], "op4_addmm");
  EXPECT_EQ(k["tiles"]["trans_b"], true);
  for (const auto& core : test::issued(r.program))
    for (const auto& in : core)
      if (in.kernel == 3 && in.op == isa::Opcode::DmaLoad) {
        EXPECT_GE(in.get("bytes"), 128);
      }
}

TEST(Compile, MatmulRowsAreSplitBetweenCorelets) {
  auto cfg = arch::load_arch("tiny");
  CompileResult r = compile(test::load_golden("matmul"), cfg, {}, "matmul.json");
  int pt0 = 0, pt1 = 0;
  for (const auto& core : test::issued(r.program))
    for (const auto& in : core)
      if (in.op == isa::Opcode::PtMatmul) (in.get("cl") ? pt1 : pt0)++;
  EXPECT_GT(pt0, 0);
  EXPECT_EQ(pt0, pt1);
}

TEST(Compile, FallbackNodeIsAnErrorNamingNodeOpAndSource) {
  auto ir = test::load_golden("matmul");
  ir["nodes"][0]["kind"] = "fallback";
  ir["nodes"][0]["kernel"] = "torch.ops.aten._fft_r2c.default";
  ir["nodes"][0]["op_overload"] = "aten._fft_r2c.default";
  try {
    compile(ir, arch::load_arch("tiny"), {}, "m.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node op0"), std::string::npos) << m;
    EXPECT_NE(m.find("aten._fft_r2c.default"), std::string::npos) << m;
    EXPECT_NE(m.find("tools/models/matmul.py:8"), std::string::npos) << m;
  }
}

TEST(Compile, UnknownExternKernelIsAnError) {
  auto ir = test::load_golden("matmul");
  ir["nodes"][0]["kernel"] = "extern_kernels.convolution";
  EXPECT_THROW(compile(ir, arch::load_arch("tiny"), {}, "m.json"), Error);
}

TEST(Compile, ReductionRowTooLongForLxIsWalkedInColumnChunks) {
  // 2^20 fp32 elements per row cannot fit LX: the row is walked in column chunks
  // (lower/loops_columns.cpp; what still cannot is tested in loops_columns_test.cpp).
  auto ir = test::load_golden("mlp_block");
  auto node = ir["nodes"][0];
  node["reduce_sizes"] = {1 << 20};
  node["body"][0]["index"]["affine"]["coeffs"]["x0"] = 1 << 20;
  ir["nodes"] = {node};
  const CompileResult r = compile(ir, arch::load_arch("tiny"), {}, "big.json");
  EXPECT_GT(r.report["kernels"][0]["split"]["column_chunks"].get<int64_t>(), 1);
}

TEST(Compile, OptionsRejectUnknownKeys) {
  CompileOptions o;
  o.set("fusion", "false");
  EXPECT_FALSE(o.fusion);
  EXPECT_THROW(o.set("nope", "1"), Error);
}

}  // namespace
}  // namespace spyre::compiler
