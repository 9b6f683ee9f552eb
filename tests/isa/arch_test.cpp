#include <gtest/gtest.h>

#include "spyre/arch/arch.h"
#include "spyre/error.h"

#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>

using spyre::arch::load_arch;

TEST(Arch, DefaultIsTheSpyreChipOfTheDesign) {
  auto c = load_arch("spyre");
  EXPECT_EQ(c.cores, 32);
  EXPECT_EQ(c.corelets, 2);
  EXPECT_EQ(c.pt_macs_per_cycle(), 512);
  // (2 MiB - 64 KiB) * 0.8 = 1625292.8 B, rounded down to a 128 B stick: 1625216 B (~1.55 MiB).
  EXPECT_EQ(c.lx_usable_bytes(), 1625216);
  // 1.15 GHz: the lowest clock at which the int4 peak exceeds the published 300 TOPS.
  EXPECT_DOUBLE_EQ(c.clock_ghz, 1.15);
  EXPECT_GT(32.0 * 1024 * c.pt_int4_rate * 2 * c.clock_ghz * 1e9, 300e12);
  EXPECT_LT(32.0 * 1024 * c.pt_int4_rate * 2 * (c.clock_ghz - 0.01) * 1e9, 300e12);
  EXPECT_NEAR(c.dram_bytes_per_cycle(), 150.0 / 1.15, 1e-9);  // 150 GB/s
  EXPECT_EQ(c.ns_to_cycles(100.0), 115);
}

TEST(Arch, SetOverridesAndPresetsLoad) {
  auto c = load_arch("tiny", {"pt.rows=16", "dram.bw_gbps=75.5"});
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(c.cores, 4);
  EXPECT_EQ(c.pt_rows, 16);
  EXPECT_DOUBLE_EQ(c.dram_bw_gbps, 75.5);
}

TEST(Arch, BadInputIsNamed) {
  auto msg = [](auto fn) {
    try {
      fn();
    } catch (const spyre::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([] { load_arch("nonesuch"); }).find("unknown architecture"), std::string::npos);
  EXPECT_NE(msg([] { load_arch("spyre", {"pt.rowz=3"}); }).find("pt.rowz"), std::string::npos);
  EXPECT_NE(msg([] { load_arch("spyre", {"pt.rows=eight"}); }).find("expected an integer"),
            std::string::npos);
  EXPECT_NE(msg([] { load_arch("spyre", {"chip.cores=0"}); }).find("chip.cores"),
            std::string::npos);
  EXPECT_NE(msg([] { load_arch("/nonexistent/x.yaml"); }).find("cannot open"), std::string::npos);
}

static std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const spyre::Error& e) {
    return e.what();
  }
  return "(no error)";
}

static std::string fmt_num(double v) {
  std::ostringstream o;
  o << std::setprecision(17) << v;
  return o.str();
}

// Every numeric parameter declares its range beside it (params.def); the default lies inside,
// the ends refuse what lies beyond them with the key and the range in the message.
TEST(Arch, EveryParameterHasARangeThatHoldsItsDefault) {
  using spyre::arch::ParamRange;
  size_t checked = 0;
  for (const auto& p : spyre::arch::param_table()) {
    if (p.type == "string") {
      EXPECT_TRUE(p.range.empty()) << p.key;
      continue;
    }
    const ParamRange r = ParamRange::parse(p.range, p.key);
    EXPECT_TRUE(r.contains(std::stod(p.default_text))) << p.key << " " << p.range;
    if (!std::isinf(r.hi)) {
      const double beyond = r.hi + (p.type == "int" ? 1.0 : r.hi_closed ? 0.5 : 0.0);
      const std::string m = error_of([&] { load_arch("spyre", {p.key + "=" + fmt_num(beyond)}); });
      EXPECT_NE(m.find(p.key), std::string::npos) << m;
    }
    const double below = r.lo - (p.type == "int" ? 1.0 : r.lo_closed ? 0.5 : 0.0);
    const std::string m = error_of([&] { load_arch("spyre", {p.key + "=" + fmt_num(below)}); });
    EXPECT_NE(m.find(p.key), std::string::npos) << p.key << ": " << m;
    ++checked;
  }
  EXPECT_GT(checked, 70u);
  EXPECT_THROW(ParamRange::parse("0..1", "x"), spyre::Error);
  EXPECT_THROW(ParamRange::parse("[1, 0]", "x"), spyre::Error);
  EXPECT_THROW(ParamRange::parse("[a, 1]", "x"), spyre::Error);
  const ParamRange half = ParamRange::parse("(0, 1]", "x");
  EXPECT_FALSE(half.contains(0));
  EXPECT_TRUE(half.contains(1));
  EXPECT_FALSE(half.contains(std::nan("")));
}

TEST(Arch, YamlDumpListsEveryParameterWithUnit) {
  auto y = load_arch("spyre").to_yaml();
  for (const auto& p : spyre::arch::param_table()) {
    EXPECT_NE(y.find(p.key + ":"), std::string::npos) << p.key;
    EXPECT_FALSE(p.unit.empty()) << p.key;
    EXPECT_FALSE(p.description.empty()) << p.key;
  }
}
