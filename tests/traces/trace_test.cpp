// What the simulator records: instruction spans with core/pc/kernel/LX args, sequencer spans,
// token flows, DRAM bandwidth counters; and that both writers are deterministic.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../sim/sim_test_util.h"
#include "recording_sink.h"
#include "spyre/sim/env.h"
#include "spyre/traces/chrome.h"
#include "spyre/traces/filter.h"
#include "spyre/traces/perfetto.h"

namespace spyre::sim {
namespace {

using namespace test;
using traces::testing::RecordingSink;

RecordingSink record() {
  RecordingSink sink;
  SimOptions o;
  o.trace = &sink;
  run(program(2, kProducerConsumer, 4096), config(2), o);
  return sink;
}

TEST(Trace, InstructionSpansCarryCorePcKernelAndLxAccesses) {
  RecordingSink s = record();
  const auto* un = s.find("spyre.core_1", "sfp0", "sfp.un");
  ASSERT_NE(un, nullptr);
  EXPECT_EQ(un->core, 1);
  EXPECT_EQ(un->pc, 4);  // wait, load, sig, wait, un
  EXPECT_EQ(un->kernel, "consume");
  // 64 f16 read from 256 and written to 512: reads first, then writes
  ASSERT_EQ(un->lx.size(), 2u);
  EXPECT_EQ(un->lx[0].addr, 256);
  EXPECT_EQ(un->lx[0].bytes, 128);
  EXPECT_FALSE(un->lx[0].write);
  EXPECT_EQ(un->lx[1].addr, 512);
  EXPECT_EQ(un->lx[1].bytes, 128);
  EXPECT_TRUE(un->lx[1].write);
  const auto* load = s.find("spyre.core_1", "dma_in", "dma.load");
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load->lx.size(), 1u);
  EXPECT_EQ(load->lx[0].addr, 256);
  EXPECT_TRUE(load->lx[0].write);
  const auto* store = s.find("spyre.core_0", "dma_out", "dma.store");
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->lx.size(), 1u);
  EXPECT_FALSE(store->lx[0].write);
  // every core unit has a track, plus the sequencer
  for (const char* t : {"seq", "dma_in", "dma_out", "pt0", "pt1", "sfp0", "sfp1", "ring"})
    EXPECT_NE(std::find(s.tracks.begin(), s.tracks.end(),
                        std::make_pair(std::string("spyre.core_0"), std::string(t))),
              s.tracks.end())
        << t;
}

TEST(Trace, TokenFlowsGoFromTheProducingToTheReleasedInstruction) {
  RecordingSink s = record();
  auto span_at = [&](int track, uint64_t t) -> const RecordingSink::Span* {
    const auto& [g, tr] = s.tracks[static_cast<size_t>(track)];
    for (const auto& sp : s.spans)
      if (sp.group == g && sp.track == tr && sp.start == t) return &sp;
    return nullptr;
  };
  std::vector<std::string> arrows;
  for (const auto& f : s.flows) {
    const auto* a = span_at(f.src, f.src_t);
    const auto* b = span_at(f.dst, f.dst_t);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_LE(a->start + a->dur, b->start);  // the consumer starts after the producer ends
    arrows.push_back(a->group + "/" + a->name + " -> " + b->group + "/" + b->name);
  }
  const std::vector<std::string> want = {"spyre.core_0/sfp.fill -> spyre.core_0/dma.store",
                                         "spyre.core_0/dma.store -> spyre.core_1/dma.load",
                                         "spyre.core_1/dma.load -> spyre.core_1/sfp.un",
                                         "spyre.core_1/sfp.un -> spyre.core_1/dma.store"};
  EXPECT_EQ(arrows, want);
  for (size_t i = 0; i < s.flows.size(); ++i) EXPECT_EQ(s.flows[i].id, i + 1);
}

TEST(Trace, DramCounterIntegratesToTheBytesMoved) {
  RecordingSink s;
  SimOptions o;
  o.trace = &s;
  auto r = run(program(2, kProducerConsumer, 4096), config(2), o);
  const auto cfg = config(2);
  double bytes = 0;
  uint64_t last = 0;
  for (const auto& c : s.counters) {
    if (c.group != "spyre.dram") continue;
    EXPECT_EQ(c.t % kTraceWindowCycles, 0u);
    EXPECT_GE(c.t, last);  // in time order
    last = c.t;
    bytes += c.value / cfg.clock_ghz * static_cast<double>(kTraceWindowCycles);
  }
  EXPECT_NEAR(bytes, static_cast<double>(r.dram_read_bytes + r.dram_write_bytes), 1e-6);
  EXPECT_EQ(s.counters.back().value, 0.0);  // the counter drops to 0 after the last window
}

TEST(Trace, SummaryDetailKeepsTheCountersAndDropsThePerEventSpans) {
  RecordingSink full, summary;
  SimOptions o;
  o.trace = &full;
  const auto r_full = run(program(2, kProducerConsumer, 4096), config(2), o);
  o.trace = &summary;
  o.trace_detail = traces::TraceDetail::Summary;
  const auto r_summary = run(program(2, kProducerConsumer, 4096), config(2), o);
  EXPECT_EQ(r_summary.cycles, r_full.cycles);
  // No instruction, sequencer, DRAM or ring spans, no flows: only chip-wide tracks remain.
  EXPECT_TRUE(summary.flows.empty());
  EXPECT_FALSE(full.flows.empty());
  for (const auto& [g, t] : summary.tracks) EXPECT_EQ(g, "spyre") << g << " / " << t;
  for (const auto& sp : summary.spans) EXPECT_EQ(sp.group, "spyre") << sp.name;
  // The counters are the same samples in both (busy fractions, DRAM bandwidth).
  ASSERT_EQ(summary.counters.size(), full.counters.size());
  for (size_t i = 0; i < full.counters.size(); ++i) {
    EXPECT_EQ(summary.counters[i].group, full.counters[i].group);
    EXPECT_EQ(summary.counters[i].name, full.counters[i].name);
    EXPECT_EQ(summary.counters[i].t, full.counters[i].t);
    EXPECT_EQ(summary.counters[i].value, full.counters[i].value);
  }
  // Each unit's busy counter integrates to the cycles its instruction spans cover.
  std::map<std::pair<std::string, std::string>, double> from_counters, from_spans;
  for (const auto& c : summary.counters) {
    const std::string suffix = traces::kBusySuffix;
    if (c.name.size() <= suffix.size() ||
        c.name.compare(c.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    from_counters[{c.group, c.name.substr(0, c.name.size() - suffix.size())}] +=
        c.value * static_cast<double>(kTraceWindowCycles);
  }
  for (const auto& sp : full.spans)
    if (sp.track != "seq" && sp.name.rfind("wait", 0) != 0 &&
        sp.group.find("core") != std::string::npos)
      from_spans[{sp.group, sp.track}] += static_cast<double>(sp.dur);
  EXPECT_GE(from_spans.size(), 4u);  // dma_in, dma_out, sfp0 on core 0 and 1 at least
  for (const auto& [k, cycles] : from_spans)
    EXPECT_NEAR(from_counters[k], cycles, 1e-6) << k.second;
  for (const auto& [k, cycles] : from_counters) EXPECT_TRUE(from_spans.count(k)) << k.second;
}

TEST(Trace, SequencerStallsAndBarriersAreSpans) {
  const char* prog = R"(.kernel 0 k
.core 0
.k 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=64 cols=64 value=1
  barrier
  halt
.core 1
.k 0
  barrier
  halt
)";
  RecordingSink s;
  SimOptions o;
  o.trace = &s;
  run(program(2, prog, 4096), config(2), o);
  const auto* drain = s.find("spyre.core_0", "seq", "drain");
  const auto* fill = s.find("spyre.core_0", "sfp0", "sfp.fill");
  ASSERT_NE(drain, nullptr);
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(drain->start + drain->dur, fill->start + fill->dur);  // waits for the fill to end
  const auto* b1 = s.find("spyre.core_1", "seq", "barrier");
  const auto* chip = s.find("spyre", "barrier", "barrier");
  ASSERT_NE(b1, nullptr);
  ASSERT_NE(chip, nullptr);
  EXPECT_EQ(b1->start + b1->dur, chip->start + chip->dur);  // released when the barrier opens
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string write_trace(const std::string& name, const std::string& filter = {}) {
  auto path = (std::filesystem::temp_directory_path() / name).string();
  traces::TraceMeta m;
  m.clock_ghz = config(2).clock_ghz;
  m.graph = "producer_consumer";
  m.cores = 2;
  {
    traces::TraceOutput out(path, m, filter);
    SimOptions o;
    o.trace = out.sink();
    run(program(2, kProducerConsumer, 4096), config(2), o);
    out.finish();
  }
  std::string text = slurp(path);
  std::filesystem::remove(path);
  return text;
}

TEST(Trace, SameRunGivesByteIdenticalFiles) {
  for (const char* name : {"spyre_trace_det.json", "spyre_trace_det.pftrace"}) {
    const std::string a = write_trace(name), b = write_trace(name);
    EXPECT_GT(a.size(), 100u) << name;
    EXPECT_EQ(a, b) << name;
  }
}

TEST(Trace, ChromeJsonHasMetadataFirstAndOneEventPerLine) {
  std::istringstream in(write_trace("spyre_trace_lines.json"));
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line.back(), ',');
  auto head = nlohmann::json::parse(line.substr(0, line.size() - 1) + "}");
  EXPECT_EQ(head["metadata"]["format"], "chrome-json");
  EXPECT_EQ(head["metadata"]["graph"], "producer_consumer");
  EXPECT_EQ(head["metadata"]["cores"], 2);
  EXPECT_DOUBLE_EQ(head["metadata"]["clock_ghz"].get<double>(), config(2).clock_ghz);
  std::getline(in, line);
  EXPECT_EQ(line, "\"traceEvents\":[");
  int events = 0, flows = 0;
  while (std::getline(in, line)) {
    if (line == "]}") break;
    if (line.empty()) continue;
    if (line.back() == ',') line.pop_back();
    auto e = nlohmann::json::parse(line);  // throws if a line is not one whole event
    ++events;
    flows += e["ph"] == "s";
  }
  EXPECT_GT(events, 20);
  EXPECT_EQ(flows, 4);
}

TEST(Trace, FilterKeepsOnlyTheChosenUnitsCoresAndWindow) {
  RecordingSink all = record();
  RecordingSink inner;
  traces::FilteringSink f(inner, traces::parse_trace_filter("unit=sfp,dma_in; core=1"));
  SimOptions o;
  o.trace = &f;
  run(program(2, kProducerConsumer, 4096), config(2), o);
  size_t want = 0;
  for (const auto& s : all.spans)
    want += s.group == "spyre.core_1" && (s.track == "sfp0" || s.track == "dma_in");
  EXPECT_EQ(inner.spans.size(), want);
  for (const auto& s : inner.spans) EXPECT_EQ(s.group, "spyre.core_1");
  EXPECT_FALSE(inner.counters.empty());  // the kept units' busy counters; dram dropped
  for (const auto& c : inner.counters) {
    EXPECT_EQ(c.group, "spyre.core_1");
    EXPECT_TRUE(c.name == "sfp0 busy" || c.name == "sfp1 busy" || c.name == "dma_in busy")
        << c.name;
  }
  ASSERT_EQ(inner.flows.size(), 1u);  // load -> sfp.un only: both ends kept
  // window: only spans overlapping it
  const auto* un = all.find("spyre.core_1", "sfp0", "sfp.un");
  RecordingSink w;
  traces::FilteringSink fw(w, traces::parse_trace_filter("window=" + std::to_string(un->start) +
                                                         ":" + std::to_string(un->start + 1)));
  o.trace = &fw;
  run(program(2, kProducerConsumer, 4096), config(2), o);
  for (const auto& s : w.spans)
    EXPECT_TRUE(s.start <= un->start && (s.start + s.dur > un->start || s.dur == 0)) << s.name;
  EXPECT_NE(w.find("spyre.core_1", "sfp0", "sfp.un"), nullptr);
}

}  // namespace
}  // namespace spyre::sim
