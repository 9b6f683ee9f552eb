// Loop kernels whose single row does not fit LX (lower/loops_columns.cpp): sum, max, softmax and
// layer_norm over rows of hundreds of thousands of columns, fp16 and fp32, 1, 2 and 3 rows.
// The graphs are the op goldens (captured at [16, 64]) with their sizes, strides and index
// coefficients rescaled to [rows, cols]; each is compiled ("tiny"), simulated (functional) and
// compared with the same IR evaluated by the reference interpreter (ir_interp.h), as
// ops_test.cpp does: max |err| <= 1e-2 x RMS + one output ulp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <set>

#include "compiler_test_util.h"
#include "ir_interp.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

using nlohmann::json;

// The golden's [16, 64] becomes [rows, cols] (16 -> rows, 64 -> cols in every size, stride,
// coefficient and index expression); fp32: every float16 becomes float32.
void rescale(json& j, int64_t rows, int64_t cols, bool fp32, const std::string& key = "") {
  auto map = [&](int64_t v) { return v == 16 ? rows : v == 64 ? cols : v; };
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) rescale(v, rows, cols, fp32, k);
  } else if (j.is_array()) {
    for (auto& v : j) rescale(v, rows, cols, fp32, key);
  } else if (j.is_number_integer()) {
    static const std::set<std::string> keys = {"size", "stride", "sizes", "reduce_sizes"};
    static const std::regex var("[xr][0-9]+");  // an index coefficient
    if (keys.count(key) || std::regex_match(key, var)) j = map(j.get<int64_t>());
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (fp32 && s == "float16") j = "float32";
    if (key == "expr") {
      s = std::regex_replace(s, std::regex("\\b64\\b"), std::to_string(cols));
      j = std::regex_replace(s, std::regex("\\b16\\b"), std::to_string(rows));
    }
  }
}

double ulp(isa::DType dt, double x) {
  const int mant = dt == isa::DType::F16 ? 10 : dt == isa::DType::BF16 ? 7 : 23;
  x = std::fabs(x);
  if (!(x > 0) || std::isinf(x)) return 0;
  return std::ldexp(1.0, std::max(std::ilogb(x), dt == isa::DType::F16 ? -14 : -126) - mant);
}

struct Case {
  std::string op;
  int64_t rows, cols;
  bool fp32;
};

std::string case_name(const Case& c) {
  return c.op + "_" + std::to_string(c.rows) + "x" + std::to_string(c.cols) +
         (c.fp32 ? "_fp32" : "_fp16");
}

json huge_ir(const Case& c) {
  json ir = test::load_golden("ops/" + c.op);
  rescale(ir, c.rows, c.cols, c.fp32);
  return ir;
}

// Compiles, simulates and checks against the interpreter; returns the compile result.
CompileResult run_and_check(const Case& c, const json& ir, const arch::ArchConfig& cfg) {
  const CompileResult r = compile(ir, cfg, CompileOptions{}, case_name(c) + ".json");
  test::IrInterp ref(ir);
  sim::DeviceMemory mem(r.program.dram_bytes, 0);
  std::mt19937 rng(99);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const TensorBinding& b = r.inputs[i];
    json view = {
        {"buffer", ir["inputs"][i]}, {"size", b.size}, {"stride", b.stride}, {"offset", 0}};
    int64_t n = 1;
    for (auto s : b.size) n *= s;
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = nd(rng);
    ref.write_view(view, v);
    v = ref.read_view(view);
    for (size_t e = 0; e < v.size(); ++e)
      isa::store_element(mem.data() + test::addr_of(b, static_cast<int64_t>(e)), b.dtype, v[e]);
  }
  ref.run();
  const sim::SimResult s = sim::simulate(r.program, cfg, mem);
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    const TensorBinding& b = r.outputs[o];
    const auto want = ref.read_view(ir["outputs"][o]);
    double ss = 0;
    for (double w : want) ss += w * w;
    const double rms = std::sqrt(ss / static_cast<double>(want.size()));
    double worst = 0;
    for (size_t e = 0; e < want.size(); ++e) {
      const double g =
          isa::load_element(mem.data() + test::addr_of(b, static_cast<int64_t>(e)), b.dtype);
      worst = std::max(worst, std::fabs(g - want[e]) / rms);
      if (!(std::fabs(g - want[e]) <= 1e-2 * rms + ulp(b.dtype, want[e]))) {
        ADD_FAILURE() << case_name(c) << " output " << o << " element " << e << ": got " << g
                      << ", want " << want[e] << " (rms " << rms << ")";
        break;
      }
    }
    std::cout << "[ columns  ] " << case_name(c) << " output " << o << ": " << s.cycles
              << " cycles, max |err|/rms " << worst << "\n";
  }
  return r;
}

class HugeRows : public ::testing::TestWithParam<Case> {};

TEST_P(HugeRows, WalkedInColumnChunksMatchesReference) {
  const Case c = GetParam();
  // At "tiny"'s 1.15 GHz the cost model runs the fp32 softmax of 3 x 100000 as cut rows, not
  // as the column walk under test; the suite keeps the 1.5 GHz its sizes were chosen at.
  const auto cfg = arch::load_arch("tiny", {"chip.clock_ghz=1.5"});
  const json ir = huge_ir(c);
  const CompileResult r = run_and_check(c, ir, cfg);
  // The column path ran (with one chunk per pass when a pass's values fit a whole row).
  int64_t chunks = 0;
  for (const auto& k : r.report["kernels"])
    if (k["split"].contains("column_chunks"))
      chunks = std::max(chunks, k["split"]["column_chunks"].get<int64_t>());
  EXPECT_GE(chunks, 1) << case_name(c);
  std::cout << "[ columns  ] " << case_name(c) << ": " << r.report["kernels"].size()
            << " kernels, at most " << chunks << " chunks per pass\n";
}

INSTANTIATE_TEST_SUITE_P(
    Ops, HugeRows,
    // Sizes: the smallest that still do not fit a row (the reference interpreter takes ~10 us
    // per element and node), and the 600000-column row of the issue.
    ::testing::Values(Case{"sum", 1, 600000, false}, Case{"sum", 3, 300000, true},
                      Case{"amax", 3, 150000, false}, Case{"amax", 2, 400000, true},
                      Case{"softmax", 1, 600000, false}, Case{"softmax", 3, 100000, true},
                      Case{"softmax", 2, 150000, false}, Case{"softmax", 8, 60000, false},
                      Case{"layer_norm", 1, 300000, true}, Case{"layer_norm", 3, 100000, false}),
    [](const auto& info) { return case_name(info.param); });

// Softmax needs exp(x - max) after the sum: it is spilled, and the report says where (the
// results of the same graph are checked above and in tests/python/test_lx_spills.py). On one
// core, so that the division fuses with the sum: over all of "tiny"'s cores its two rows are
// cut into shorter ones and it runs faster as a kernel of its own.
TEST(HugeRowsReport, SoftmaxListsItsSpillsInScratchPastEveryBuffer) {
  const Case c{"softmax", 2, 600000, false};
  CompileOptions one_core;
  one_core.cores = 1;
  const CompileResult r = compile(huge_ir(c), arch::load_arch("tiny"), one_core, "s.json");
  const json& plan = r.report["lx_plan"];
  ASSERT_GE(plan["spills"].size(), 2u);  // one per row's worker at least
  uint64_t end_of_buffers = 0;
  for (const auto& b : r.report["dram_plan"])
    if (b["buffer"] != "<spill scratch>")
      end_of_buffers =
          std::max(end_of_buffers, b["addr"].get<uint64_t>() + b["bytes"].get<uint64_t>());
  std::set<int64_t> cores;
  for (const auto& s : plan["spills"]) {
    const auto addr = s["dram_addr"].get<uint64_t>(), bytes = s["bytes"].get<uint64_t>();
    EXPECT_GE(addr, end_of_buffers) << s.dump();
    EXPECT_LE(addr + bytes, r.program.dram_bytes) << s.dump();
    EXPECT_GE(bytes, 600000u * 4) << s.dump();  // a whole fp32 row
    EXPECT_FALSE(s["kernel"].get<std::string>().empty());
    EXPECT_NE(s["why"].get<std::string>().find("does not fit LX"), std::string::npos);
    cores.insert(s["core"].get<int64_t>());
  }
  EXPECT_EQ(cores, std::set<int64_t>{0});  // two rows, one per corelet of the one core
  // Spill regions do not overlap each other.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& s : plan["spills"])
    spans.push_back({s["dram_addr"].get<uint64_t>(),
                     s["dram_addr"].get<uint64_t>() + s["bytes"].get<uint64_t>()});
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first);
  // The scratch region is in the DRAM plan and the program's DRAM size.
  const json& scratch = r.report["dram_plan"].back();
  EXPECT_EQ(scratch["buffer"], "<spill scratch>");
  EXPECT_EQ(scratch["bytes"], plan["spill_scratch_bytes"]);
  EXPECT_EQ(scratch["addr"].get<uint64_t>() + scratch["bytes"].get<uint64_t>(),
            r.program.dram_bytes);
}

// With a worker per row on every corelet, DRAM is the bottleneck: exp(x - max) is recomputed in
// the last pass instead of spilled (softmax 8 x 60000 above checks the recomputed results).
TEST(HugeRowsReport, SoftmaxOverManyRowsRecomputesInsteadOfSpilling) {
  for (const auto& [rows, arch] : {std::pair<int64_t, const char*>{8, "tiny"}, {64, "spyre"}}) {
    const Case c{"softmax", rows, 600000, false};
    // Fused whole (the cost model finds fusing the max about even, simulated within 0.1 %):
    // the passes are what this test is about.
    CompileOptions opts;
    opts.set("debug.force_fusion", "all");
    const CompileResult r = compile(huge_ir(c), arch::load_arch(arch), opts, "s.json");
    EXPECT_TRUE(r.report["lx_plan"]["spills"].empty()) << arch;
    int64_t passes = 0;
    for (const auto& k : r.report["kernels"])
      passes = std::max(passes, k["split"].value("passes", int64_t{0}));
    EXPECT_EQ(passes, 3) << arch;  // max, then sum of exp, then exp again / sum
  }
}

// A sum has nothing to spill: the reduction accumulates in LX across chunks.
TEST(HugeRowsReport, SumHasNoSpills) {
  const Case c{"sum", 1, 600000, false};
  const CompileResult r = compile(huge_ir(c), arch::load_arch("tiny"), CompileOptions{}, "s.json");
  EXPECT_TRUE(r.report["lx_plan"]["spills"].empty());
  EXPECT_EQ(r.report["lx_plan"]["spill_scratch_bytes"], 0);
}

// What still cannot be chunked is refused naming the node and what was expected.
TEST(HugeRowsReport, ArgmaxOverAHugeRowIsRefusedNamingTheNode) {
  const Case c{"argmax", 2, 600000, false};
  try {
    compile(huge_ir(c), arch::load_arch("tiny"), CompileOptions{}, "argmax.json");
    FAIL() << "compiled";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("argmax.json: node op0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does not fit LX"), std::string::npos) << msg;
    EXPECT_NE(msg.find("argmax/argmin cannot accumulate across chunks"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace spyre::compiler
