// The whole-graph LX plan (lx_residency.h) on hand-made kernels: what stays in LX, where, and
// which barriers go. End to end (outputs identical with the plan on and off, trace replay):
// tests/python/test_lx_planning.py.
#include <gtest/gtest.h>

#include "spyre/compiler/lx_residency.h"

namespace spyre::compiler {
namespace {

ir::Graph graph(const std::vector<std::string>& buffers, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs) {
  ir::Graph g;
  for (const auto& b : buffers) {
    ir::Buffer buf;
    buf.name = b;
    buf.kind = "intermediate";
    buf.size = {256, 64};
    buf.stride = {64, 1};
    g.buffers.push_back(buf);
  }
  g.inputs = inputs;
  for (const auto& o : outputs) {
    ir::TensorView v;
    v.buffer = o;
    g.outputs.push_back(v);
  }
  return g;
}

// A loop kernel over [256, 64] fp16 rows, 64 per core on 4 cores, storing `out` and loading
// `in` with the same row layout.
GroupLx loop(const std::string& name, const std::vector<std::string>& in,
             const std::vector<std::string>& out, int64_t peak = 4096, int64_t rows = 256) {
  GroupLx k;
  k.name = name;
  LoopDivision d;
  d.rows = rows;
  for (int64_t c = 0; c < 4; ++c) d.core_rows.emplace_back(c * rows / 4, (c + 1) * rows / 4);
  for (const auto& b : in) {
    d.accesses.push_back({b, false, 0, 64, 1, true, true, isa::DType::F16, true, 64});
    k.reads.insert(b);
  }
  for (const auto& b : out) {
    d.accesses.push_back({b, true, 0, 64, 1, true, true, isa::DType::F16, true, 64});
    k.writes.insert(b);
  }
  k.division = d;
  k.lx_peak = peak;
  return k;
}

// The plan's resident buffer named `name`, or null.
const ResidentBuffer* resident(const LxResidencyPlan& p, const std::string& name) {
  for (const auto& b : p.buffers)
    if (b.buffer == name) return &b;
  return nullptr;
}

TEST(LxResidency, ABufferBothKernelsSliceAlikeStaysInLxAtTheTopAndItsBarrierGoes) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  const std::vector<GroupLx> ks = {loop("k0", {"x"}, {"t"}), loop("k1", {"t"}, {"y"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  ASSERT_EQ(p.buffers.size(), 1u);
  const ResidentBuffer& b = p.buffers[0];
  EXPECT_EQ(b.buffer, "t");
  EXPECT_EQ(b.bytes, 64 * 64 * 2);  // a core's 64 rows of 64 fp16
  EXPECT_EQ(b.lx, cfg.lx_usable_bytes() - b.bytes);
  EXPECT_FALSE(b.store_dram);  // nobody else reads it, not an output
  EXPECT_TRUE(p.kernels[0].resident.at("t").write);
  EXPECT_FALSE(p.kernels[1].resident.at("t").write);
  EXPECT_EQ(p.kernels[0].lx_top, b.lx);
  EXPECT_EQ(p.kernels[1].lx_top, b.lx);
  EXPECT_FALSE(p.kernels[0].barrier_after);  // k1 reads only what stays on its core
  // y, the graph output, has no reader: it goes to DRAM.
  EXPECT_EQ(p.to_json(ks)["barriers_dropped"], 1);
}

TEST(LxResidency, AnOutputOrAnotherReaderKeepsTheDramCopy) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y", "z"}, {"x"}, {"t", "y", "z"});
  GroupLx mm;  // a matmul-like kernel: no row division
  mm.name = "mm";
  mm.reads = {"t"};
  mm.writes = {"z"};
  mm.cross_core = true;
  const std::vector<GroupLx> ks = {loop("k0", {"x"}, {"t"}), loop("k1", {"t"}, {"y"}), mm};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  ASSERT_EQ(p.buffers.size(), 1u);
  EXPECT_TRUE(p.buffers[0].store_dram);
  EXPECT_EQ(p.buffers[0].dram_reason, "graph output");
  EXPECT_EQ(p.buffers[0].readers, std::vector<size_t>{1});
  EXPECT_TRUE(p.kernels[1].barrier_after);  // mm multicasts: it waits for every core
}

TEST(LxResidency, OtherRowsOrNoRoomMeanDram) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  // The reader divides 512 rows: core c's rows of t are not the ones it computed.
  const std::vector<GroupLx> other = {loop("k0", {"x"}, {"t"}),
                                      loop("k1", {"t"}, {"y"}, 4096, 512)};
  LxResidencyPlan p = plan_lx_residency(g, other, cfg, true);
  EXPECT_TRUE(p.buffers.empty());
  EXPECT_TRUE(p.kernels[0].barrier_after);  // k1 reads t from DRAM
  // Working sets that leave less than a slice of room.
  const int64_t full = cfg.lx_usable_bytes() - 4096;
  const std::vector<GroupLx> big = {loop("k0", {"x"}, {"t"}, full), loop("k1", {"t"}, {"y"})};
  p = plan_lx_residency(g, big, cfg, true);
  EXPECT_TRUE(p.buffers.empty());
  bool said = false;
  for (const auto& d : p.decisions)
    said = said || d["reason"].get<std::string>().rfind("no LX room", 0) == 0;
  EXPECT_TRUE(said) << p.decisions.dump();
}

TEST(LxResidency, BarriersStayForDramTrafficSpillsAndWhenOff) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "a", "b", "y"}, {"x"}, {"a", "y"});
  // k1 is independent of k0 (reads only the graph input): no barrier; k2 reads a (an output
  // written by k0 to DRAM too) from LX but b from DRAM (k1 wrote it after the last barrier).
  GroupLx k0 = loop("k0", {"x"}, {"a"}), k1 = loop("k1", {"x"}, {"b"});
  GroupLx k2 = loop("k2", {"a"}, {"y"});
  k2.reads.insert("b");
  LxResidencyPlan p = plan_lx_residency(g, {k0, k1, k2}, cfg, true);
  EXPECT_FALSE(p.kernels[0].barrier_after);
  EXPECT_TRUE(p.kernels[1].barrier_after);
  EXPECT_NE(p.barriers[1]["reason"].get<std::string>().find("reads b from DRAM"),
            std::string::npos);
  k1.spills = true;
  p = plan_lx_residency(g, {k0, k1, k2}, cfg, true);
  EXPECT_TRUE(p.kernels[0].barrier_after);
  p = plan_lx_residency(g, {k0, k1, k2}, cfg, false);
  EXPECT_TRUE(p.buffers.empty());
  for (const auto& k : p.kernels) EXPECT_TRUE(k.resident.empty() && k.barrier_after);
}

// A buffer no kernel writes (here the graph input x) that two loop kernels read alike is loaded
// once: the first reader loads it into the slot, the second reads it there. A kernel that reads
// it with other rows reads it from DRAM, and one read alone is no candidate.
TEST(LxResidency, AnInputTwoKernelsReadAlikeIsLoadedOnceByTheFirst) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "w", "s", "y", "z"}, {"x", "w"}, {"s", "y", "z"});
  const std::vector<GroupLx> ks = {loop("k0", {"x", "w"}, {"s"}), loop("k1", {"x", "s"}, {"y"}),
                                   loop("k2", {"x"}, {"z"}, 4096, 128)};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  const ResidentBuffer* x = resident(p, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->loaded);
  EXPECT_FALSE(x->store_dram);
  EXPECT_EQ(x->producer, 0u);
  EXPECT_EQ(x->readers, std::vector<size_t>{1});  // k2 slices it otherwise: from DRAM
  const ResidentSlot& first = p.kernels[0].resident.at("x");
  EXPECT_TRUE(first.load);
  EXPECT_FALSE(first.write);
  EXPECT_FALSE(p.kernels[1].resident.at("x").load);
  EXPECT_EQ(p.kernels[2].resident.count("x"), 0u);
  bool w_considered = false;  // w is read once: not a candidate
  for (const auto& d : p.decisions) w_considered = w_considered || d["buffer"] == "w";
  EXPECT_FALSE(w_considered);
}

// A host fallback stops the device program and may update its inputs in place (host_call.h):
// nothing stays in LX across one, produced or loaded.
TEST(LxResidency, NothingStaysInLxAcrossAHostFallback) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "h", "y"}, {"x"}, {"h", "y"});
  GroupLx host;
  host.name = "fallback";
  host.host = true;
  host.writes = {"h"};
  const std::vector<GroupLx> ks = {loop("k0", {"x"}, {"t"}), host, loop("k1", {"x", "t"}, {"y"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  EXPECT_TRUE(p.buffers.empty());
  int rejected = 0;
  for (const auto& d : p.decisions)
    if (d["resident"] == false &&
        d["reason"].get<std::string>().find("host fallback fallback") != std::string::npos)
      ++rejected;
  EXPECT_EQ(rejected, 2);  // t (produced) and x (loaded)
  // Without the fallback both stay.
  const std::vector<GroupLx> direct = {loop("k0", {"x"}, {"t"}), loop("k1", {"x", "t"}, {"y"})};
  EXPECT_EQ(plan_lx_residency(g, direct, cfg, true).buffers.size(), 2u);
}

// A value whose producer cannot keep it in LX (a matmul: no row division) but that two loop
// kernels read alike after it (a LayerNorm's statistics and apply kernels after a projection)
// is loaded once by the first of them. The first reader needs its barrier (it reads what the
// matmul wrote to DRAM); the second does not.
TEST(LxResidency, AMatmulsOutputTwoLoopKernelsReadAlikeIsLoadedOnce) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "s", "y"}, {"x"}, {"y"});
  GroupLx mm;
  mm.name = "mm";
  mm.reads = {"x"};
  mm.writes = {"t"};
  mm.lx_peak = 4096;
  const std::vector<GroupLx> ks = {mm, loop("stats", {"t"}, {"s"}),
                                   loop("apply", {"t", "s"}, {"y"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  const ResidentBuffer* t = resident(p, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->loaded);
  EXPECT_EQ(t->producer, 1u);  // the first reader fills the slot
  EXPECT_EQ(t->readers, std::vector<size_t>{2});
  EXPECT_TRUE(p.kernels[1].resident.at("t").load);
  EXPECT_EQ(p.kernels[0].resident.count("t"), 0u);  // the matmul stores it as before
  EXPECT_TRUE(p.kernels[0].barrier_after);
  EXPECT_FALSE(p.kernels[1].barrier_after);
}

// An input updated in place (k1 writes x) is loaded once only after its last write: k0 reads
// the old x from DRAM, k2 loads the new one into the slot and k3 takes it from there.
TEST(LxResidency, AnInputWrittenInPlaceIsLoadedOnceOnlyAfterItsLastWrite) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "a", "b", "c"}, {"x"}, {"a", "b", "c"});
  const std::vector<GroupLx> ks = {loop("k0", {"x"}, {"a"}), loop("k1", {"a"}, {"x"}),
                                   loop("k2", {"x"}, {"b"}), loop("k3", {"x"}, {"c"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  const ResidentBuffer* x = resident(p, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->loaded);
  EXPECT_EQ(x->producer, 2u);
  EXPECT_EQ(x->readers, std::vector<size_t>{3});
  EXPECT_EQ(p.kernels[0].resident.count("x"), 0u);
  EXPECT_EQ(p.kernels[1].resident.count("x"), 0u);
  EXPECT_TRUE(p.kernels[2].resident.at("x").load);
}

// A kernel between the matmul and the first reader that touches none of their buffers drops
// its barrier; the first reader, reading what the matmul wrote, keeps its own.
TEST(LxResidency, TheFirstReaderOfALoadedValueKeepsItsBarrierAfterAnUnrelatedKernel) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "z", "u", "s", "y"}, {"x", "z"}, {"u", "y"});
  GroupLx mm;
  mm.name = "mm";
  mm.reads = {"x"};
  mm.writes = {"t"};
  mm.lx_peak = 4096;
  const std::vector<GroupLx> ks = {mm, loop("other", {"z"}, {"u"}), loop("stats", {"t"}, {"s"}),
                                   loop("apply", {"t", "s"}, {"y"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  const ResidentBuffer* t = resident(p, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->producer, 2u);
  EXPECT_FALSE(p.kernels[0].barrier_after);  // "other" reads and writes nothing of the matmul's
  EXPECT_TRUE(p.kernels[1].barrier_after);   // "stats" reads t from DRAM, written by mm
  EXPECT_FALSE(p.kernels[2].barrier_after);  // "apply" takes t and s from LX on its core
}

// A matmul reading the buffer first does not stop two later loop kernels sharing one load.
TEST(LxResidency, AMatmulReadingFirstLeavesTheLoadToTheFirstLoopKernel) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "m", "a", "b"}, {"x"}, {"m", "a", "b"});
  GroupLx mm;
  mm.name = "mm";
  mm.reads = {"x"};
  mm.writes = {"m"};
  const std::vector<GroupLx> ks = {mm, loop("k1", {"x"}, {"a"}), loop("k2", {"x"}, {"b"})};
  const LxResidencyPlan p = plan_lx_residency(g, ks, cfg, true);
  const ResidentBuffer* x = resident(p, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->producer, 1u);
  EXPECT_EQ(x->readers, std::vector<size_t>{2});
}

// --- work division chosen with the plan (plan_lx_jointly)

// A matmul-like producer of `out` ([256, 64] fp16) that gives its rows to 3 of the 4 cores.
GroupLx row_matmul(const std::string& name, const std::string& out, int64_t peak = 4096) {
  GroupLx k = loop(name, {}, {out}, peak);
  k.division->core_rows = {{0, 96}, {96, 192}, {192, 256}, {0, 0}};
  k.grid = MatmulGrid{};
  k.grid->gm = 3;
  k.cross_core = true;
  return k;
}

// A trial lowering that gives a kernel the rows it is offered and `fast` cycles when it reads
// any value from an LX slot, `slow` otherwise; it counts its calls.
struct FakeTrials {
  const std::vector<GroupLx>& groups;
  int64_t fast, slow;
  int calls = 0;
  std::optional<GroupLx> operator()(size_t k, const KernelLx& lx) {
    ++calls;
    GroupLx out = groups[k];
    if (!lx.rows.empty()) out.division->core_rows = lx.rows;
    out.cycles = lx.resident.empty() ? slow : fast;
    return out;
  }
};

using Rows = std::vector<std::pair<int64_t, int64_t>>;

// plan_lx_jointly on "tiny" over `ks` (updated as it updates them), with FakeTrials(fast, slow)
// lowering the kernels as they were.
struct JointRun {
  std::vector<GroupLx> before;
  nlohmann::json decisions = nlohmann::json::array();
  int calls = 0;
  LxResidencyPlan plan;
};
JointRun run_joint(const ir::Graph& g, std::vector<GroupLx>& ks, int64_t fast, int64_t slow,
                   bool enabled = true, bool joint = true) {
  JointRun run;
  run.before = ks;
  FakeTrials trials{run.before, fast, slow};
  run.plan = plan_lx_jointly(g, ks, arch::load_arch("tiny"), enabled, joint, std::ref(trials),
                             run.decisions);
  run.calls = trials.calls;
  return run;
}

TEST(JointDivision, ALoopKernelTakesTheMatmulsRowsWhenThatIsPredictedFaster) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  std::vector<GroupLx> ks = {row_matmul("mm", "t"), loop("softmax", {"t"}, {"y"})};
  ks[1].cycles = 1000;
  const auto [before, decisions, calls, p] = run_joint(g, ks, 400, 1100);
  const Rows mm_rows = before[0].division->core_rows;
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_TRUE(decisions[0]["taken"].get<bool>()) << decisions.dump();
  EXPECT_EQ(decisions[0]["producer_rows_cycles"], 400);
  EXPECT_EQ(ks[1].division->core_rows, mm_rows);  // what later kernels see
  EXPECT_EQ(p.kernels[1].rows, mm_rows);          // what its lowering gets
  const ResidentBuffer* t = resident(p, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->producer, 0u);
  EXPECT_EQ(t->readers, std::vector<size_t>{1});
  EXPECT_EQ(t->bytes, 96 * 64 * 2);            // the largest core's rows
  ASSERT_TRUE(p.kernels[0].grid.has_value());  // the matmul keeps the split that gave its rows
  EXPECT_EQ(p.kernels[0].grid->gm, 3);
  EXPECT_TRUE(p.kernels[0].resident.at("t").write);
}

TEST(JointDivision, ItKeepsItsOwnRowsWhenTheProducersArePredictedSlower) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  std::vector<GroupLx> ks = {row_matmul("mm", "t"), loop("softmax", {"t"}, {"y"})};
  ks[1].cycles = 1000;
  const auto [before, decisions, calls, p] = run_joint(g, ks, 1200, 1300);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_FALSE(decisions[0]["taken"].get<bool>());
  EXPECT_EQ(decisions[0]["reason"],
            "the producer's rows with the value in LX are predicted slower");
  EXPECT_EQ(calls, 1);  // no second lowering
  EXPECT_EQ(ks[1].division->core_rows, before[1].division->core_rows);
  EXPECT_TRUE(p.kernels[1].rows.empty());
  EXPECT_EQ(resident(p, "t"), nullptr);  // other rows: t goes through DRAM
  EXPECT_FALSE(p.kernels[0].grid.has_value());
}

TEST(JointDivision, RowsTakenForAValueThatFindsNoRoomGoBack) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  // The matmul's working set leaves no room for t's slot beside it.
  std::vector<GroupLx> ks = {row_matmul("mm", "t", cfg.lx_usable_bytes() - 1024),
                             loop("softmax", {"t"}, {"y"})};
  ks[1].cycles = 1000;
  const auto [before, decisions, calls, p] = run_joint(g, ks, 400, 1100);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_FALSE(decisions[0]["taken"].get<bool>());
  EXPECT_EQ(decisions[0]["reason"], "the value did not stay in LX (see lx_residency.decisions)");
  EXPECT_EQ(ks[1].division->core_rows, before[1].division->core_rows);  // its own rows again
  EXPECT_EQ(ks[1].cycles, 1000);
  EXPECT_TRUE(p.kernels[1].rows.empty());
  EXPECT_EQ(resident(p, "t"), nullptr);
}

TEST(JointDivision, AChainOfLoopKernelsFollowsTheMatmulsRows) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "u", "y"}, {"x"}, {"y"});
  std::vector<GroupLx> ks = {row_matmul("mm", "t"), loop("exp", {"t"}, {"u"}),
                             loop("norm", {"u"}, {"y"})};
  ks[1].cycles = ks[2].cycles = 1000;
  const auto [before, decisions, calls, p] = run_joint(g, ks, 400, 1100);
  const Rows mm_rows = before[0].division->core_rows;
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[1]["producer"], "exp");
  EXPECT_EQ(p.kernels[1].rows, mm_rows);
  EXPECT_EQ(p.kernels[2].rows, mm_rows);
  ASSERT_NE(resident(p, "t"), nullptr);
  ASSERT_NE(resident(p, "u"), nullptr);
  EXPECT_FALSE(p.kernels[1].barrier_after);  // norm takes u from LX on its core
}

TEST(JointDivision, NothingIsTriedWithThePlanOrTheJointDivisionOff) {
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  std::vector<GroupLx> ks = {row_matmul("mm", "t"), loop("softmax", {"t"}, {"y"})};
  const JointRun off = run_joint(g, ks, 400, 1100, false, true);
  EXPECT_EQ(off.calls, 0);
  EXPECT_TRUE(off.decisions.empty());
  EXPECT_TRUE(off.plan.buffers.empty());
  // compiler.joint_division=off: the plan alone; t's rows differ, so it goes through DRAM.
  const JointRun alone = run_joint(g, ks, 400, 1100, true, false);
  EXPECT_EQ(alone.calls, 0);
  EXPECT_TRUE(alone.decisions.empty());
  EXPECT_EQ(resident(alone.plan, "t"), nullptr);
  EXPECT_EQ(ks[1].division->core_rows, off.before[1].division->core_rows);
}

TEST(JointDivision, AMatmulTakesItsProducersRowsAndReadsItsAOperandFromLx) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "w", "y"}, {"x", "w"}, {"y"});
  GroupLx mm;  // its own split divides no rows (a K split): no division
  mm.name = "mm";
  mm.reads = {"t", "w"};
  mm.writes = {"y"};
  mm.grid = MatmulGrid{};
  mm.grid->gk = 2;
  mm.cycles = 1000;
  mm.lx_peak = 4096;
  std::vector<GroupLx> ks = {loop("norm", {"x"}, {"t"}), mm};
  const Rows norm_rows = ks[0].division->core_rows;
  int calls = 0;
  // The matmul with the rows it is offered: A (t) as rows of 64, B (w) read whole.
  auto lower = [&](size_t k, const KernelLx& lx) -> std::optional<GroupLx> {
    ++calls;
    GroupLx out = ks[k];
    LoopDivision d;
    d.rows = 256;
    d.core_rows = lx.rows;
    d.accesses.push_back({"t", false, 0, 64, 1, true, true, isa::DType::F16, true, 64});
    d.accesses.push_back({"w", false, 0, 64, 1, true, true, isa::DType::F16, false, 64});
    out.division = d;
    out.grid->gk = 1;
    out.grid->gm = 4;
    out.cycles = lx.resident.count("t") ? 600 : 1100;
    return out;
  };
  nlohmann::json decisions = nlohmann::json::array();
  const LxResidencyPlan p = plan_lx_jointly(g, ks, cfg, true, true, lower, decisions);
  ASSERT_EQ(decisions.size(), 1u) << decisions.dump();
  EXPECT_TRUE(decisions[0]["taken"].get<bool>());
  EXPECT_EQ(calls, 2);  // with the slot, then its working set without
  EXPECT_EQ(p.kernels[1].rows, norm_rows);
  const ResidentBuffer* t = resident(p, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->readers, std::vector<size_t>{1});
  EXPECT_FALSE(t->store_dram);
  ASSERT_TRUE(p.kernels[1].grid.has_value());  // it lowers with the split that gave those rows
  EXPECT_EQ(p.kernels[1].grid->gm, 4);
  EXPECT_EQ(p.kernels[1].grid->gk, 1);
  EXPECT_EQ(resident(p, "w"), nullptr);  // B is read whole: not placeable
}

// A matmul whose own split divides no rows is lowered again with a split of whole rows for a
// loop kernel reading its output; the two together decide.
TEST(JointDivision, AMatmulIsLoweredAgainWithWholeRowsWhenThatAndItsReaderTogetherAreFaster) {
  const auto cfg = arch::load_arch("tiny");
  const ir::Graph g = graph({"x", "t", "y"}, {"x"}, {"y"});
  // 1600: predicted slower together; 0: a split of whole rows on fewer cores (not tried).
  for (const int64_t whole_cycles : {1100, 1600, 0}) {
    GroupLx mm = row_matmul("mm", "t");
    mm.division.reset();  // its own split: N or K
    mm.grid->gk = 2;
    mm.grid->cores_used = 3;
    mm.cycles = 1000;
    std::vector<GroupLx> ks = {mm, loop("softmax", {"t"}, {"y"})};
    ks[1].cycles = 1000;
    GroupLx rows_mm = row_matmul("mm", "t");
    rows_mm.grid->cores_used = whole_cycles > 0 ? 3 : 2;
    auto lower = [&](size_t k, const KernelLx& lx) -> std::optional<GroupLx> {
      if (k == 0) {
        if (!lx.whole_rows) return std::nullopt;
        GroupLx out = rows_mm;
        out.cycles = whole_cycles;
        return out;
      }
      GroupLx out = ks[1];
      if (!lx.rows.empty()) out.division->core_rows = lx.rows;
      out.cycles = lx.resident.empty() ? 1100 : 500;
      return out;
    };
    nlohmann::json decisions = nlohmann::json::array();
    const LxResidencyPlan p = plan_lx_jointly(g, ks, cfg, true, true, lower, decisions);
    if (whole_cycles == 0) {
      EXPECT_TRUE(decisions.empty()) << decisions.dump();
      EXPECT_EQ(resident(p, "t"), nullptr);
      EXPECT_FALSE(p.kernels[0].grid.has_value());
      continue;
    }
    ASSERT_EQ(decisions.size(), 1u);
    EXPECT_EQ(decisions[0]["producer_whole_rows_cycles"], whole_cycles);
    if (whole_cycles == 1100) {  // 1100 + 500 < 1000 + 1000
      EXPECT_TRUE(decisions[0]["taken"].get<bool>()) << decisions.dump();
      ASSERT_NE(resident(p, "t"), nullptr);
      ASSERT_TRUE(p.kernels[0].grid.has_value());
      EXPECT_EQ(p.kernels[0].grid->gm, 3);  // the split of whole rows
      EXPECT_EQ(p.kernels[1].rows, rows_mm.division->core_rows);
    } else {  // 1600 + 500 > 2000: both keep their own
      EXPECT_FALSE(decisions[0]["taken"].get<bool>());
      EXPECT_FALSE(ks[0].division.has_value());
      EXPECT_FALSE(p.kernels[0].grid.has_value());
      EXPECT_EQ(resident(p, "t"), nullptr);
    }
  }
}

}  // namespace
}  // namespace spyre::compiler
