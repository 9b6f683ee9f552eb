// Spyre's device layout of tensors in device memory (device_layout.h).
#include "spyre/sim/device_layout.h"

#include <algorithm>

#include "spyre/error.h"

namespace spyre::sim {

namespace {
// Row-major contiguous: the last stride 1, each other the product of the sizes after it.
bool contiguous(const isa::TensorSym& t) {
  if (t.size.empty() || t.size.size() != t.stride.size()) return false;
  int64_t expect = 1;
  for (size_t i = t.size.size(); i-- > 0;) {
    if (t.size[i] > 1 && t.stride[i] != expect) return false;
    expect *= t.size[i];
  }
  return true;
}
}  // namespace

DeviceLayout::DeviceLayout(const arch::ArchConfig& cfg, const isa::Program& program)
    : stick_(std::max<int64_t>(1, cfg.stick_bytes)) {
  if (cfg.dram_tensor_layout == "row_major") return;
  if (cfg.dram_tensor_layout != "stick")
    throw Error("dram.tensor_layout",
                "unknown layout '" + cfg.dram_tensor_layout + "'; known: row_major, stick");
  const auto s = static_cast<uint64_t>(stick_);
  for (const isa::TensorSym& t : program.tensors) {
    if (!contiguous(t)) continue;
    const uint64_t es = static_cast<uint64_t>(isa::dtype_bits(t.dtype)) / 8;
    const uint64_t row = static_cast<uint64_t>(t.size.back()) * es;
    // Sticks are cut at the program's 128 B boundaries (dma.h), so a tensor must start on one.
    if (es == 0 || row == 0 || row % s != 0 || t.bytes % row != 0 || t.dram_addr % s != 0) continue;
    const uint64_t rows = t.bytes / row;
    if (rows < 2 || row == s) continue;  // one row, or one stick per row: the same bytes
    // The first dimension other than 1 is the stick columns' rows; the ones between it and
    // the last are outermost (torch-spyre's generic stick layout, spyre_tensor_impl.cpp:
    // [d1, ..., d(n-2), d(n-1) / stick, d0, stick]). Two dimensions: d0 = all the rows.
    std::vector<uint64_t> dims;
    for (size_t i = 0; i + 1 < t.size.size(); ++i)
      if (t.size[i] > 1) dims.push_back(static_cast<uint64_t>(t.size[i]));
    uint64_t first = rows;
    if (dims.size() >= 2 && rows % dims[0] == 0) first = dims[0];
    regions_.push_back(Region{t.dram_addr, t.dram_addr + t.bytes, row, rows, first});
  }
  // Tensors sharing storage (an input a node writes in place) would claim one byte twice: the
  // lowest address keeps it (the program's order among equal ones), a later overlapping one
  // stays row-major.
  std::stable_sort(regions_.begin(), regions_.end(),
                   [](const Region& a, const Region& b) { return a.base < b.base; });
  std::vector<Region> kept;
  for (const Region& r : regions_)
    if (kept.empty() || r.base >= kept.back().end) kept.push_back(r);
  regions_ = std::move(kept);
}

uint64_t DeviceLayout::physical(uint64_t addr) const {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](uint64_t a, const Region& r) { return a < r.base; });
  if (it == regions_.begin()) return addr;
  const Region& r = *--it;
  if (addr >= r.end) return addr;
  const auto s = static_cast<uint64_t>(stick_);
  const uint64_t off = addr - r.base, row = off / r.row_bytes, b = off % r.row_bytes;
  const uint64_t mid = r.rows / r.first;  // rows of the outermost dims, one plane each
  return r.base + row % mid * r.first * r.row_bytes + b / s * r.first * s + row / mid * s + b % s;
}

}  // namespace spyre::sim
