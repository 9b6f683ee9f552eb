// The kernel prediction (report/timeline.cpp) and the memory ports of spyre.mem (mem_tlm.h):
// cores that share a port share its rate once its buffer has run dry. And the DRAM's channels:
// transfers whose words crowd onto a few channels share those channels' rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler_test_util.h"
#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/context.h"
#include "spyre/compiler/cost.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {
namespace {

using isa::Opcode;

constexpr int64_t kPiece = 64 << 10;  // bytes per load

isa::Instr halt() {
  return isa::make_instr(Opcode::Halt, std::vector<std::pair<std::string_view, int64_t>>{});
}

// Streams of 32 cores; each core in `loaders` loads `loads` contiguous pieces of its own.
std::vector<std::vector<isa::Instr>> streams(const std::vector<int>& loaders, int64_t loads) {
  std::vector<std::vector<isa::Instr>> per_core(32);
  int64_t dram = 0;
  for (int c : loaders)
    for (int64_t i = 0; i < loads; ++i, dram += kPiece)
      per_core[static_cast<size_t>(c)].push_back(
          isa::make_instr(Opcode::DmaLoad, {{"dram", dram},
                                            {"lx", (i % 2) * kPiece},
                                            {"bytes", kPiece},
                                            {"rows", 1},
                                            {"dram_stride", kPiece},
                                            {"lx_stride", kPiece},
                                            {"reps", 1}}));
  for (auto& s : per_core) s.push_back(halt());
  return per_core;
}

std::vector<int> cores(int from, int to) {  // [from, to)
  std::vector<int> out;
  for (int c = from; c < to; ++c) out.push_back(c);
  return out;
}

int64_t cycles(const std::vector<std::vector<isa::Instr>>& s,
               const std::vector<std::string>& sets) {
  return predict(s, arch::load_arch("spyre", sets), CostParams{}).cycles;
}

// The timeline chains back-to-back pt.mm on one array as the simulator does
// (arch/unit_timing.h, pt_test's WeightStationaryOverlapChainsBackToBackInstructions): with
// pt.fill_drain = overlap the second of two ws pt.mm (m=20, n=128, k=16 on "spyre"'s 8 x 64
// array) costs its streams only, 80 cycles where alone it takes 158; per_fold, 392 each.
TEST(TimelinePt, BackToBackMatmulsChainUnderOverlapOnly) {
  auto mm = [] {
    return isa::make_instr(Opcode::PtMatmul, {{"cl", 0},
                                              {"a", 0},
                                              {"b", 640},
                                              {"c", 4736},
                                              {"m", 20},
                                              {"n", 128},
                                              {"k", 16},
                                              {"lda", 16},
                                              {"ldb", 128},
                                              {"ldc", 128},
                                              {"flags", 0},
                                              {"dt", static_cast<int64_t>(isa::DType::F16)}});
  };
  const std::vector<std::vector<isa::Instr>> one{{mm(), halt()}}, two{{mm(), mm(), halt()}};
  const std::vector<std::string> ws = {"chip.cores=1", "pt.dataflow=ws"};
  auto with = [&](const char* mode) {
    std::vector<std::string> sets = ws;
    sets.push_back(std::string("pt.fill_drain=") + mode);
    return sets;
  };
  EXPECT_EQ(cycles(two, with("overlap")) - cycles(one, with("overlap")), 80);
  EXPECT_EQ(cycles(two, with("per_fold")) - cycles(one, with("per_fold")), 392);
  // The prediction's compute_cycles (the busiest PT/SFP queue) counts what it charged.
  EXPECT_EQ(predict(two, arch::load_arch("spyre", with("overlap")), CostParams{}).compute_cycles,
            158 + 80);
  EXPECT_EQ(predict(two, arch::load_arch("spyre", with("per_fold")), CostParams{}).compute_cycles,
            2 * 392);
}

TEST(TimelinePorts, SixteenCoresOnOnePortStreamAtThePortRate) {
  const auto cfg = arch::load_arch("spyre");
  const auto one_port = streams(cores(0, 16), 16);  // 16 MiB through port 0
  const double bytes = 16.0 * 16 * kPiece;
  const double port_rate = cfg.mem_port_gbps / cfg.clock_ghz;  // bytes/cycle
  const int64_t c = cycles(one_port, {});
  // Past the buffer, the port's rate; before it the DRAM's (faster): at least this long.
  EXPECT_GE(static_cast<double>(c),
            (bytes - static_cast<double>(cfg.mem_port_buffer_bytes)) / port_rate);
  EXPECT_LE(static_cast<double>(c), 1.05 * bytes / port_rate);
  // Without the port limit the same loads run at the DRAM's rate (about 146 vs 75 GB/s).
  const int64_t open = cycles(one_port, {"mem.port_gbps=1000000"});
  EXPECT_LT(static_cast<double>(open), 0.6 * static_cast<double>(c));
  // The same 16 loaders split over both ports: each port carries half, the DRAM binds.
  const auto both = streams(
      [] {
        auto v = cores(0, 8);
        for (int c2 : cores(16, 24)) v.push_back(c2);
        return v;
      }(),
      16);
  EXPECT_EQ(cycles(both, {}), open);
}

TEST(TimelinePorts, LoadsWithinThePortBufferAreNotHeldBack) {
  // 16 cores x 2 x 64 KiB = 2 MiB: more than a buffer (256 KiB), so the port holds it back...
  const auto small = streams(cores(0, 16), 2);
  EXPECT_GT(cycles(small, {}), cycles(small, {"mem.port_gbps=1000000"}));
  // ...but with a 4 MiB buffer the port never runs dry: the DRAM's timing alone.
  EXPECT_EQ(cycles(small, {"mem.port_buffer_bytes=4194304"}),
            cycles(small, {"mem.port_gbps=1000000"}));
}

TEST(TimelinePorts, WritesHaveTheirOwnDirection) {
  // Reads on port 0 and writes on port 0 do not take from each other's rate.
  auto s = streams(cores(0, 8), 16);
  for (int c = 8; c < 16; ++c) {
    auto& v = s[static_cast<size_t>(c)];
    v.pop_back();
    for (int64_t i = 0; i < 16; ++i)
      v.push_back(isa::make_instr(Opcode::DmaStore, {{"dram", (64 << 20) + (c * 16 + i) * kPiece},
                                                     {"lx", 0},
                                                     {"bytes", kPiece},
                                                     {"rows", 1},
                                                     {"dram_stride", kPiece},
                                                     {"lx_stride", kPiece},
                                                     {"reps", 1}}));
    v.push_back(halt());
  }
  const auto reads_only = streams(cores(0, 8), 16);
  // 8 MiB each way through one port: each direction at or under its own rate, so the mixed
  // kernel is bound by the DRAM (which also pays the turnarounds), not by twice the port.
  const auto cfg = arch::load_arch("spyre");
  const double port_rate = cfg.mem_port_gbps / cfg.clock_ghz;
  EXPECT_LT(static_cast<double>(cycles(s, {})), 2.0 * 8.0 * 16 * kPiece / port_rate);
  EXPECT_GT(cycles(s, {}), cycles(reads_only, {}));
}

// `n` cores each load a column of 128-byte rows 4 KiB apart (one DRAM word a row, so each
// load's words all land on one channel); `crowded`: every column on channel 0, else core c's
// on channel c.
std::vector<std::vector<isa::Instr>> columns(int n, bool crowded) {
  constexpr int64_t kRows = 512, kStride = 4096;
  std::vector<std::vector<isa::Instr>> per_core(32);
  for (int c = 0; c < n; ++c)
    per_core[static_cast<size_t>(c)].push_back(
        isa::make_instr(Opcode::DmaLoad, {{"dram", crowded ? c * kRows * kStride : c * 128},
                                          {"lx", 0},
                                          {"bytes", 128},
                                          {"rows", kRows},
                                          {"dram_stride", kStride},
                                          {"lx_stride", 128},
                                          {"reps", 1}}));
  for (auto& s : per_core) s.push_back(halt());
  return per_core;
}

TEST(TimelineChannels, LoadsCrowdedOntoOneChannelShareItsRate) {
  // The plain channel interleave, pinned: with channel hashing (dram.channel_xor=1) a
  // column's rows change channel with the row bits.
  const std::vector<std::string> plain = {"dram.channel_xor=0"};
  const auto cfg = arch::load_arch("spyre", plain);
  const int64_t spread = cycles(columns(8, false), plain);
  const int64_t crowded = cycles(columns(8, true), plain);
  // Eight channels against one: close to eight times as long.
  EXPECT_GT(static_cast<double>(crowded), 6.0 * static_cast<double>(spread));
  // At most one channel's rate: the bytes over it, at least.
  const double bytes = 8.0 * 512 * 128;
  EXPECT_GE(static_cast<double>(crowded), bytes / CostParams{}.channel_bytes_per_cycle(cfg));
  // The channel's rate is the DRAM's own (cost.channel_efficiency), not an even share of a
  // total that few cores' engines limit: a 4-core chip's column on one channel runs as fast.
  const int64_t few = cycles(columns(1, true), plain);
  EXPECT_EQ(predict(columns(1, true), arch::load_arch("spyre", {"chip.cores=4", plain[0]}),
                    CostParams{.dram_efficiency = 0.27})
                .cycles,
            few);
}

// dram.channel_xor as the simulator's address map has it (tests/sim/dram_test.cpp): one word in
// each of 16 DRAM row windows (32 KiB apart) lands on channel 0 without the hash and on
// channels 0..15 with it; the words of one window keep their channels' row visits.
TEST(CostChannels, ChannelXorSpreadsRowsAPowerOfTwoApart) {
  for (int hashed : {0, 1}) {
    const auto cfg = arch::load_arch("spyre", {"dram.channel_xor=" + std::to_string(hashed)});
    std::vector<CostParams::DramVisit> visits;
    std::vector<char> channels;
    ASSERT_TRUE(CostParams{}.dram_visits(cfg, 128, 32768, 16, 0, visits, &channels));
    ASSERT_EQ(visits.size(), 16u);
    for (size_t k = 0; k < visits.size(); ++k) {
      EXPECT_EQ(visits[k].channel, hashed ? static_cast<int64_t>(k) : 0);
      EXPECT_EQ(visits[k].window, static_cast<int64_t>(k));
    }
    EXPECT_EQ(std::count(channels.begin(), channels.end(), 1), hashed ? 16 : 1);
    // Window 0x21, word 5: channel 5 ^ (0x2 ^ 0x1).
    visits.clear();
    ASSERT_TRUE(CostParams{}.dram_visits(cfg, 128, 32768, 2, 0x21 * 32768 + 5 * 128, visits));
    EXPECT_EQ(visits[0].channel, hashed ? 5 ^ 3 : 5);
    // Rows within one window (2 KiB apart, one column each): the same visit count either way.
    visits.clear();
    ASSERT_TRUE(CostParams{}.dram_visits(cfg, 512, 2048, 16, 0, visits));
    EXPECT_DOUBLE_EQ(CostParams::words_per_visit(visits), 16.0);
  }
}

// A transfer whose last bytes take less time than the clock can still tell apart from `now`
// (far into a long prediction: 33.5 M cycles here) completes; the DRAM timeline used to look
// again at the same instant forever. The TPUv3 14 x 14 convolution with 128 requests in flight
// met it in its tiling search (the compile never ended; now it takes seconds).
TEST(TimelineDram, TheLastBytesOfATransferCompleteFarIntoALongKernel) {
  const auto cfg = arch::load_arch("tpuv3", {"dma.max_outstanding=128"});
  const CompileResult r = compile(test::load_golden("conv_nchw_64x14x14x256x256x3x1x1"), cfg);
  EXPECT_EQ(r.program.cores.size(), 1u);
  EXPECT_GT(r.report.at("totals").at("predicted_cycles").get<int64_t>(), 0);
}

// 16 pairs of cores: the two cores of a pair load the two halves (`half` bytes each) of the
// same 64-row blocks, four blocks, the pairs 3.5 MiB apart. GB/s predicted.
double halves_gbps(int64_t half) {
  constexpr int64_t kRows = 64, kBlocks = 4, kPairGap = 3670016;
  std::vector<std::vector<isa::Instr>> per_core(32);
  for (int c = 0; c < 32; ++c)
    for (int64_t b = 0; b < kBlocks; ++b)
      per_core[static_cast<size_t>(c)].push_back(isa::make_instr(
          Opcode::DmaLoad, {{"dram", c / 2 * kPairGap + b * kRows * 2 * half + (c % 2) * half},
                            {"lx", 0},
                            {"bytes", half},
                            {"rows", kRows},
                            {"dram_stride", 2 * half},
                            {"lx_stride", half},
                            {"reps", 1}}));
  for (auto& s : per_core) s.push_back(halt());
  const auto cfg = arch::load_arch("spyre");
  const double bytes = 32.0 * kBlocks * kRows * static_cast<double>(half);
  return bytes / static_cast<double>(predict(per_core, cfg, CostParams{}).cycles) * cfg.clock_ghz;
}

TEST(TimelineChannels, HalfRowsMergeOnlyWhenTheirPiecesLoadTheChannelsAlike) {
  // 6144-byte halves: the second starts on channel 0 like the first (48 words), so the two
  // cores of a pair stay in step and their halves stream as whole rows; 7168-byte halves
  // (the second on channel 8) drift apart in the DRAM model and each opens the rows alone:
  // simulated 144 and 120 GB/s, 121 and 108 for one half alone (members_meet in
  // dma_dram.cpp).
  const double in_step = halves_gbps(6144), apart = halves_gbps(7168);
  EXPECT_LT(apart, 0.85 * in_step) << "in step " << in_step << ", apart " << apart;
  EXPECT_GT(in_step, 135.0);
}

TEST(TimelineChannels, TheFifoDramHasNoChannels) {
  const std::vector<std::string> fifo = {"dram.impl=fifo"};
  EXPECT_EQ(cycles(columns(8, true), fifo), cycles(columns(8, false), fifo));
}

// sync.delay holds the sequencer as in the simulator: ahead of the loads, the prediction moves by
// the delay; after them, the loads run through it.
TEST(TimelineDelay, TheSequencerWaitsAndTheQueuesGoOn) {
  auto s = streams(cores(0, 32), 4);
  const int64_t plain = cycles(s, {});
  const auto delay = isa::make_instr(Opcode::Delay, {{"cycles", 50000}});
  auto ahead = s;
  for (auto& c : ahead) c.insert(c.begin(), delay);
  EXPECT_EQ(cycles(ahead, {}), plain + 50000 + arch::load_arch("spyre").issue_cycles);
  auto behind = s;
  for (auto& c : behind) c.insert(c.end() - 1, delay);
  ASSERT_GT(plain, 1000);
  EXPECT_LT(cycles(behind, {}), plain + 50000);
  EXPECT_GE(cycles(behind, {}), 50000);
}

}  // namespace
}  // namespace spyre::compiler

namespace spyre::compiler {
namespace {

// A compile remembers its kernel predictions (context.h: predict_kernel): the same streams give
// the same prediction from the memo, different streams (another operand, another core's split)
// a new one, and a configuration other than the compile's bypasses the memo.
TEST(PredictMemo, RemembersEqualStreamsAndTellsDifferentOnesApart) {
  const auto cfg = arch::load_arch("spyre");
  const CompileContext ctx{CompileOptions{}};
  const auto a = streams({0, 1, 2, 3}, 8);
  const KernelPrediction first = predict_kernel(ctx, a, cfg);
  EXPECT_EQ(first.cycles, predict(a, cfg, ctx.opts.cost).cycles);
  EXPECT_EQ(ctx.predictions.size(), 1u);
  EXPECT_EQ(predict_kernel(ctx, a, cfg).cycles, first.cycles);
  EXPECT_EQ(ctx.predictions.size(), 1u);  // from the memo

  auto b = a;  // one operand differs: a new entry, and the prediction of b itself
  b[0][0].a[static_cast<size_t>(isa::op_info(Opcode::DmaLoad).index_of("bytes"))] = kPiece / 2;
  EXPECT_EQ(predict_kernel(ctx, b, cfg).cycles, predict(b, cfg, ctx.opts.cost).cycles);
  EXPECT_EQ(ctx.predictions.size(), 2u);
  const auto c = streams({0, 1, 2}, 8);  // the same loads, one core fewer
  EXPECT_EQ(predict_kernel(ctx, c, cfg).cycles, predict(c, cfg, ctx.opts.cost).cycles);
  EXPECT_EQ(ctx.predictions.size(), 3u);
  auto d = a;  // the same streams on 16 cores, the rest gone
  d.resize(16);
  const KernelPrediction pd = predict_kernel(ctx, d, cfg), want = predict(d, cfg, ctx.opts.cost);
  EXPECT_EQ(pd.to_json(), want.to_json());  // every field
  EXPECT_EQ(ctx.predictions.size(), 4u);
  auto e = a;  // another kernel id only: predict() does not read it, the entry is shared
  for (auto& core : e)
    for (auto& in : core) in.kernel = 7;
  EXPECT_EQ(predict_kernel(ctx, e, cfg).to_json(), first.to_json());
  EXPECT_EQ(ctx.predictions.size(), 4u);

  auto other = cfg;  // not the compile's configuration: computed, not remembered
  other.dma_setup_cycles += 1000;
  ASSERT_NE(predict(a, other, ctx.opts.cost).cycles, first.cycles);  // a memo hit would show
  EXPECT_EQ(predict_kernel(ctx, a, other).cycles, predict(a, other, ctx.opts.cost).cycles);
  EXPECT_EQ(ctx.predictions.size(), 4u);
}

}  // namespace
}  // namespace spyre::compiler
