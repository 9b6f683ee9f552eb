// Convolution as an implicit GEMM (compiler/lower/conv.cpp): single-node graphs of
// extern_kernels.convolution in shapes the goldens do not reach (several input-channel chunks,
// output-column tiles, several output-channel tiles, contiguous weights, asymmetric stride,
// padding and dilation, groups, bias), compiled for "tiny", simulated and compared with the
// reference interpreter (ir_interp.h).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "compiler_test_util.h"
#include "conv_ir.h"
#include "ir_interp.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/conv.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

struct ConvCase {
  std::string name;
  int64_t n, c, h, w, oc, kh, kw;
  std::array<int64_t, 2> stride, pad, dil;
  int64_t groups;
  bool bias, weight_channels_last;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

using test::cl_stride;

nlohmann::json conv_ir(const ConvCase& k) {
  const int64_t oh = (k.h + 2 * k.pad[0] - k.dil[0] * (k.kh - 1) - 1) / k.stride[0] + 1;
  const int64_t ow = (k.w + 2 * k.pad[1] - k.dil[1] * (k.kw - 1) - 1) / k.stride[1] + 1;
  const std::vector<int64_t> xs{k.n, k.c, k.h, k.w}, ws{k.oc, k.c / k.groups, k.kh, k.kw},
      os{k.n, k.oc, oh, ow};
  const std::vector<int64_t> wst =
      k.weight_channels_last ? cl_stride(ws)
                             : std::vector<int64_t>{ws[1] * ws[2] * ws[3], ws[2] * ws[3], ws[3], 1};
  const auto& buf = test::fp16_buffer;
  const auto& view = test::fp16_view;
  nlohmann::json j = test::graph_header(k.name);
  j["buffers"] = {buf("x", "input", xs, cl_stride(xs)), buf("wt", "parameter", ws, wst),
                  buf("y", "output", os, cl_stride(os))};
  j["inputs"] = {"x", "wt"};
  nlohmann::json ins = {view("x", xs, cl_stride(xs)), view("wt", ws, wst)};
  if (k.bias) {
    j["buffers"].push_back(buf("b", "parameter", {k.oc}, {1}));
    j["inputs"].push_back("b");
    ins.push_back(view("b", {k.oc}, {1}));
  }
  j["outputs"] = {view("y", os, cl_stride(os))};
  const nlohmann::json node = test::conv_node(ins, "y", os, k.stride, k.pad, k.dil, k.groups);
  j["nodes"] = {node};
  return j;
}

using test::addr_of;

class Conv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv, MatchesReference) {
  const ConvCase& c = GetParam();
  const nlohmann::json ir = conv_ir(c);
  auto cfg = arch::load_arch("tiny");
  for (const std::string mode : {"auto", "halo", "wide", "taps"}) {
    CompileOptions opts;
    opts.set("debug.conv_halo", mode);
    const CompileResult r = compile(ir, cfg, opts, c.name + ".json");
    test::IrInterp ref(ir);
    sim::DeviceMemory mem(r.program.dram_bytes, 0);
    std::mt19937 rng(99);
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const TensorBinding& b = r.inputs[i];
      int64_t numel = 1;
      for (auto s : b.size) numel *= s;
      nlohmann::json v = {
          {"buffer", ir["inputs"][i]}, {"size", b.size}, {"stride", b.stride}, {"offset", 0}};
      std::vector<double> vals(static_cast<size_t>(numel));
      for (auto& x : vals) x = std::normal_distribution<double>(0.0, 1.0)(rng);
      ref.write_view(v, vals);
      vals = ref.read_view(v);
      for (size_t e = 0; e < vals.size(); ++e)
        isa::store_element(mem.data() + addr_of(b, static_cast<int64_t>(e)), b.dtype, vals[e]);
    }
    ref.run();
    const sim::SimResult s = sim::simulate(r.program, cfg, mem);
    const TensorBinding& o = r.outputs.at(0);
    const auto want = ref.read_view(ir["outputs"][0]);
    double rms = 0, err = 0, top = 0;
    for (size_t e = 0; e < want.size(); ++e) {
      const double got =
          isa::load_element(mem.data() + addr_of(o, static_cast<int64_t>(e)), o.dtype);
      rms += want[e] * want[e];
      top = std::max(top, std::abs(want[e]));
      err = std::max(err, std::abs(got - want[e]));
    }
    rms = std::sqrt(rms / static_cast<double>(want.size()));
    std::cout << "[ conv     ] " << c.name << " (tiles " << r.report["kernels"][0]["tiles"].dump()
              << "): " << s.cycles << " cycles, max err " << err << " (rms " << rms << ")\n";
    EXPECT_GT(rms, 0.1);
    // fp16 output: one ulp of the largest values plus the fp32/double accumulation difference.
    EXPECT_LE(err, top * std::ldexp(1.0, -10) + 1e-3 * rms);
    EXPECT_EQ(r.report["kernels"][0]["unit"], "pt");
    const nlohmann::json& tiles = r.report["kernels"][0]["tiles"];
    if ((mode == "halo" || mode == "taps") && c.kh * c.kw > 1) {
      EXPECT_EQ(tiles["halo"].get<bool>(), mode == "halo");
      EXPECT_FALSE(tiles["wide"].get<bool>());
    }
    // Halo-wide rows where the stride is 1 (elsewhere the option leaves every tiling).
    if (mode == "wide" && c.kh * c.kw > 1 && c.stride[0] == 1 && c.stride[1] == 1) {
      EXPECT_TRUE(tiles["halo"].get<bool>());
      EXPECT_TRUE(tiles["wide"].get<bool>());
    }
    // Small feature maps in a batch: tiles of whole images (the last one partial), unless
    // the halo is forced (a halo tile holds one image).
    if (c.name == "batch_images" && mode != "halo" && mode != "wide") {
      EXPECT_GT(r.report["kernels"][0]["tiles"]["tb"].get<int64_t>(), 1);
    }
  }
}

// Weights kept in LX: one core with several tiles that each cover every output channel loads
// each weight slice once, where it used to load every slice again for every tile. Counted over
// the program's weight loads (hardware loops off, so each load is one instruction).
TEST(ConvWeights, OneCoreLoadsEachWeightSliceOnceAcrossItsTiles) {
  const ConvCase c{"kept", 4, 32, 12, 12, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, true};
  const nlohmann::json ir = conv_ir(c);
  CompileOptions opts;
  opts.set("cores", "1");
  opts.set("hw_loops", "off");
  const CompileResult r = compile(ir, arch::load_arch("tiny"), opts, "kept.json");
  const nlohmann::json& k = r.report["kernels"][0];
  ASSERT_TRUE(k["tiles"]["weights_kept"].get<bool>()) << k["tiles"].dump();
  ASSERT_GT(k["split"]["output_tiles"].get<int64_t>(), 1) << k["split"].dump();
  const TensorBinding& w = r.inputs.at(1);
  const int64_t w_bytes = c.oc * c.c * c.kh * c.kw * 2;
  const uint64_t lo = w.dram_addr, hi = lo + static_cast<uint64_t>(w_bytes);
  int64_t loaded = 0;
  for (const isa::Instr& in : r.program.cores.at(0)) {
    if (in.op != isa::Opcode::DmaLoad) continue;
    const auto d = static_cast<uint64_t>(in.get("dram"));
    if (d >= lo && d < hi)
      loaded += in.get("bytes") * in.get("rows") * in.get("reps") * in.get("outer");
  }
  EXPECT_EQ(loaded, w_bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv,
    ::testing::Values(
        // Two input-channel chunks (256 + 64), bias.
        ConvCase{"ic_chunks", 1, 320, 6, 6, 48, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
        // Two output-channel tiles (128 + 32), odd spatial size.
        ConvCase{"oc_tiles", 2, 24, 7, 9, 160, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, true},
        // Output columns wider than one tile (256 + 44).
        ConvCase{"ow_tiles", 1, 8, 3, 300, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
        // Contiguous (OIHW) weights, 5x3 kernel, asymmetric stride/padding/dilation, 4 groups.
        ConvCase{"asym_grouped", 3, 16, 11, 13, 8, 5, 3, {2, 1}, {2, 0}, {1, 2}, 4, true, false},
        // Eleven 5 x 5 images: tiles of several whole images, the last one partial; bias.
        ConvCase{"batch_images", 11, 24, 5, 5, 40, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
        // Dilation 2 at stride 1 (halo-wide rows reach two pixels per tap), bias.
        ConvCase{"dilated", 2, 16, 8, 10, 24, 3, 3, {1, 1}, {2, 2}, {2, 2}, 1, true, true},
        // 1x1, stride 2, no padding, depthwise.
        ConvCase{"depthwise_1x1", 1, 12, 9, 9, 12, 1, 1, {2, 2}, {0, 0}, {1, 1}, 12, false, true}),
    [](const ::testing::TestParamInfo<ConvCase>& i) { return i.param.name; });

}  // namespace
}  // namespace spyre::compiler
