// The device layout of tensors (dram.tensor_layout, device_layout.h) and the DMA engines'
// walk of a transfer in it (dma.h).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim_test_util.h"
#include "spyre/error.h"
#include "spyre/sim/device_layout.h"

namespace spyre::sim {
namespace {

isa::TensorSym tensor(const std::string& name, std::vector<int64_t> size,
                      std::vector<int64_t> stride, uint64_t addr) {
  isa::TensorSym t;
  t.name = name;
  t.role = "scratch";
  t.dtype = isa::DType::F16;
  t.size = std::move(size);
  t.stride = std::move(stride);
  t.dram_addr = addr;
  t.bytes = isa::storage_span_bytes(t.dtype, t.size, t.stride, name);
  return t;
}

arch::ArchConfig stick_config() {
  arch::ArchConfig cfg = test::config(1);
  cfg.dram_tensor_layout = "stick";
  return cfg;
}

// An fp16 [64, 512] tensor (rows of 1 KiB, 8 sticks) lies stick column by stick column: the
// byte b of row r at (b / 128) * 64 * 128 + r * 128 + b % 128, every stick once; a transposed
// view, rows that are not whole sticks, a single row, a tensor off a stick boundary and one
// overlapping the first keep their bytes, as does an address outside every tensor; row_major
// moves nothing.
TEST(DeviceLayout, StickLaysContiguousTensorsOutStickColumnByStickColumn) {
  isa::Program p;
  p.tensors = {tensor("x", {64, 512}, {512, 1}, 0),
               tensor("alias", {32, 1024}, {1024, 1}, 0),
               tensor("view", {512, 64}, {1, 512}, 1 << 17),
               tensor("ragged", {64, 100}, {100, 1}, 1 << 18),
               tensor("row", {1, 1024}, {1024, 1}, 1 << 19),
               tensor("unaligned", {64, 512}, {512, 1}, (1 << 20) + 64)};
  const DeviceLayout row_major(test::config(1), p);
  EXPECT_FALSE(row_major.active());
  EXPECT_EQ(row_major.physical(1000), 1000u);

  const DeviceLayout d(stick_config(), p);
  ASSERT_TRUE(d.active());
  std::set<uint64_t> sticks;
  for (uint64_t r = 0; r < 64; ++r)
    for (uint64_t b = 0; b < 1024; b += 37) {
      const uint64_t want = b / 128 * 64 * 128 + r * 128 + b % 128;
      ASSERT_EQ(d.physical(r * 1024 + b), want) << "row " << r << " byte " << b;
      sticks.insert(d.physical(r * 1024 + b / 128 * 128));
    }
  EXPECT_EQ(sticks.size(), 64u * 8u);  // a permutation of x's sticks
  EXPECT_EQ(*sticks.rbegin(), 65536u - 128u);
  for (uint64_t a : {uint64_t{1} << 17, (uint64_t{1} << 17) + 130, uint64_t{1} << 18,
                     (uint64_t{1} << 18) + 4000, (uint64_t{1} << 19) + 300, uint64_t{70000},
                     (uint64_t{1} << 20) + 64 + 1024, uint64_t{1} << 30})
    EXPECT_EQ(d.physical(a), a) << a;
}

// More dimensions (torch-spyre's generic stick layout, spyre_tensor_impl.cpp): an fp16
// [4, 1, 3, 256] tensor is [3, 256 / 64, 4, 64] on the device (the 1 does not count): the byte b
// of x[i, 0, m, :] at m * 4 * 512 + (b / 128) * 4 * 128 + i * 128 + b % 128, each plane of the
// middle dimension contiguous, every stick once.
TEST(DeviceLayout, TheDimensionsBetweenTheFirstAndTheLastAreOutermost) {
  isa::Program p;
  p.tensors = {tensor("x", {4, 1, 3, 256}, {768, 768, 256, 1}, 0)};
  const DeviceLayout d(stick_config(), p);
  ASSERT_TRUE(d.active());
  std::set<uint64_t> sticks;
  for (uint64_t i = 0; i < 4; ++i)
    for (uint64_t m = 0; m < 3; ++m)
      for (uint64_t b = 0; b < 512; b += 31) {
        const uint64_t want = m * 4 * 512 + b / 128 * 4 * 128 + i * 128 + b % 128;
        ASSERT_EQ(d.physical((i * 3 + m) * 512 + b), want) << i << " " << m << " " << b;
        sticks.insert(d.physical((i * 3 + m) * 512 + b / 128 * 128));
      }
  EXPECT_EQ(sticks.size(), 4u * 3u * 4u);
}

TEST(DeviceLayout, UnknownLayoutNamesTheKey) {
  arch::ArchConfig cfg = test::config(1);
  cfg.dram_tensor_layout = "column_major";
  try {
    DeviceLayout(cfg, isa::Program{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dram.tensor_layout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("column_major"), std::string::npos) << e.what();
  }
}

// One core loads from an fp16 [64, 512] tensor at 0 and stores into another at 65536. Row-major,
// a tile of 8 whole rows (8 KiB) is two 4 KiB requests, and a 64-row x 128 B block (a
// transpose's read) 64 requests of 128 B. In the stick layout the tile is 8 stick columns of
// 1 KiB (8 requests) and the block one stick column of 8 KiB (2 requests). The data a
// functional run moves is the same either way: only timing sees the layout.
TEST(DeviceLayout, DmaEnginesWalkATransferInTheLayoutsRuns) {
  auto prog = [](const std::string& body) {
    isa::Program p = test::program(1, ".core 0\n" + body + "  halt\n", 1 << 17);
    p.tensors = {tensor("x", {64, 512}, {512, 1}, 0), tensor("y", {64, 512}, {512, 1}, 65536)};
    return p;
  };
  const isa::Program tile = prog(R"(  dma.load dram=8192 lx=0 bytes=8192
  sync.sig q=dma_in tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=73728 bytes=8192
)");
  const isa::Program block =
      prog("  dma.load dram=0 lx=0 bytes=128 rows=64 dram_stride=1024 lx_stride=128\n");
  auto requests = [](const SimResult& r, const char* key) {
    return r.stats["chip"]["dram"][key].get<uint64_t>();
  };
  for (const char* impl : {"fifo", "lpddr5"}) {
    arch::ArchConfig row = test::config(1), stick = stick_config();
    row.dram_impl = stick.dram_impl = impl;
    const SimResult rt = test::run(tile, row), st = test::run(tile, stick);
    EXPECT_EQ(requests(rt, "read_requests"), 2u) << impl;
    EXPECT_EQ(requests(st, "read_requests"), 8u) << impl;
    EXPECT_EQ(requests(rt, "write_requests"), 2u) << impl;
    EXPECT_EQ(requests(st, "write_requests"), 8u) << impl;
    EXPECT_EQ(rt.dram_read_bytes, st.dram_read_bytes) << impl;
    EXPECT_EQ(requests(test::run(block, row), "read_requests"), 64u) << impl;
    EXPECT_EQ(requests(test::run(block, stick), "read_requests"), 2u) << impl;
  }
  // Functional: the stored tile holds the loaded rows under either layout.
  for (const arch::ArchConfig& cfg : {test::config(1), stick_config()}) {
    DeviceMemory dram(tile.dram_bytes, 0);
    for (size_t i = 0; i < 65536; ++i) dram[i] = static_cast<uint8_t>(i * 7 + 3);
    SimOptions opts;
    opts.functional = true;
    simulate(tile, cfg, dram, opts);
    for (size_t i = 0; i < 8192; ++i)
      ASSERT_EQ(dram[73728 + i], dram[8192 + i]) << cfg.dram_tensor_layout << " byte " << i;
  }
}

}  // namespace
}  // namespace spyre::sim
