// --trace-filter syntax and the windowed counters.
#include <gtest/gtest.h>

#include "recording_sink.h"
#include "spyre/error.h"
#include "spyre/traces/filter.h"

namespace spyre::traces {
namespace {

TEST(TraceFilter, ParsesUnitsCoresAndWindow) {
  TraceFilter f = parse_trace_filter(" unit=pt,dma ; core=0-3,8; window=1000:50000 ");
  EXPECT_EQ(f.units, (std::set<std::string>{"pt", "dma_in", "dma_out"}));
  EXPECT_TRUE(f.keeps_core(0) && f.keeps_core(3) && f.keeps_core(8));
  EXPECT_FALSE(f.keeps_core(4));
  EXPECT_EQ(f.from, 1000u);
  EXPECT_EQ(f.to, 50000u);
  TraceFilter open = parse_trace_filter("window=:20");
  EXPECT_EQ(open.from, 0u);
  EXPECT_EQ(open.to, 20u);
  EXPECT_EQ(parse_trace_filter("window=5:").to, UINT64_MAX);
  EXPECT_TRUE(parse_trace_filter("").units.empty());
}

void expect_error(const std::string& spec, const std::string& part) {
  try {
    parse_trace_filter(spec);
    ADD_FAILURE() << spec << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(TraceFilter, BadSyntaxNamesTheField) {
  expect_error("unit=gpu", "field 'unit': unknown unit 'gpu'");
  expect_error("core=3-1", "field 'core'");
  expect_error("core=x", "field 'core': 'x' is not a non-negative integer");
  expect_error("window=5", "field 'window'");
  expect_error("window=9:3", "field 'window'");
  expect_error("cores=1", "unknown field 'cores'");
  expect_error("unit", "not key=value");
  expect_error("unit=pt;unit=sfp", "field 'unit': given twice");
}

TEST(TraceFilter, UnitsOfTracks) {
  EXPECT_EQ(unit_of_track("spyre.core_3", "pt1"), "pt");
  EXPECT_EQ(unit_of_track("spyre.core_3", "sfp0"), "sfp");
  EXPECT_EQ(unit_of_track("spyre.core_3", "seq"), "seq");
  EXPECT_EQ(unit_of_track("spyre.dram", "ch5"), "dram");
  EXPECT_EQ(unit_of_track("spyre.ring_data", "link 3->4"), "ring");
  EXPECT_EQ(unit_of_track("spyre", "kernels"), "kernels");
  EXPECT_EQ(unit_of_counter("spyre", "lx planned bytes"), "lx");
  EXPECT_EQ(core_of_group("spyre.core_12"), 12);
  EXPECT_EQ(core_of_group("spyre.dram"), -1);
}

TEST(WindowCounter, SpreadsAmountsOverWindowsAndDropsToZeroAfterGaps) {
  testing::RecordingSink s;
  WindowCounter c("g", "n", 10, 1.0);
  c.add(s, 0, 5, 10, 10.0);          // 5 in window 0, 5 in window 1
  c.add(s, 12, 40, 0, 20.0);         // window 4
  EXPECT_EQ(s.counters.size(), 1u);  // window 0 is complete at cycle 12
  c.flush_all(s);
  std::vector<std::pair<uint64_t, double>> got;
  for (const auto& x : s.counters) got.emplace_back(x.t, x.value);
  const std::vector<std::pair<uint64_t, double>> want = {
      {0, 0.5}, {10, 0.5}, {20, 0.0}, {40, 2.0}, {50, 0.0}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace spyre::traces
