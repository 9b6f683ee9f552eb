#include <gtest/gtest.h>

#include "spyre/arch/arch.h"
#include "spyre/error.h"

using spyre::arch::load_arch;

TEST(Arch, DefaultIsTheSpyreChipOfTheDesign) {
  auto c = load_arch("spyre");
  EXPECT_EQ(c.cores, 32);
  EXPECT_EQ(c.corelets, 2);
  EXPECT_EQ(c.pt_macs_per_cycle(), 512);
  // (2 MiB - 64 KiB) * 0.8 = 1625292.8 B, rounded down to a 128 B stick: 1625216 B (~1.55 MiB).
  EXPECT_EQ(c.lx_usable_bytes(), 1625216);
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 100.0);  // 150 GB/s at 1.5 GHz
  EXPECT_EQ(c.ns_to_cycles(100.0), 150);
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

TEST(Arch, YamlDumpListsEveryParameterWithUnit) {
  auto y = load_arch("spyre").to_yaml();
  for (const auto& p : spyre::arch::param_table()) {
    EXPECT_NE(y.find(p.key + ":"), std::string::npos) << p.key;
    EXPECT_FALSE(p.unit.empty()) << p.key;
    EXPECT_FALSE(p.description.empty()) << p.key;
  }
}
