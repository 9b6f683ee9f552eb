#pragma once
// Where a tensor's bytes lie in device memory (dram.tensor_layout, params.def). Programs address
// every tensor row-major; under "stick" (Spyre's device layout) a contiguous tensor whose rows are
// whole sticks is stored stick column by stick column: with L bytes per row (the last dim), R
// rows and S = lx.stick_bytes, the byte at row-major offset r * L + b lies at
//   (b / S) * R * S + r * S + b % S
// from the tensor's base, so an fp16 [R, C] is [C/64, R, 64] and a stick column of consecutive
// rows is one contiguous run. With more dimensions (those of size 1 dropped) the ones between
// the first and the last are outermost, as in torch-spyre's generic stick layout: [d0, m, C] is
// [m, C/64, d0, 64], a plane of d0 rows per index of m. Tensors that are views, not contiguous, a
// single row, not on a stick boundary, or whose rows are not whole sticks keep their row-major
// bytes, as do addresses outside every tensor. The DMA engines (dma.h) translate each stick of a
// transfer and walk the transfer in the layout's contiguous runs; the data itself stays where the
// program put it (functional runs copy by the program's addresses), so only timing sees the layout.
#include <cstdint>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"

namespace spyre::sim {

class DeviceLayout {
 public:
  // Throws spyre::Error("dram.tensor_layout", ...) on a name other than row_major or stick.
  DeviceLayout(const arch::ArchConfig& cfg, const isa::Program& program);
  // False when every address is where the program put it (row_major, or no tensor laid out).
  bool active() const { return !regions_.empty(); }
  int64_t stick_bytes() const { return stick_; }
  // The device address of the program's address `addr`.
  uint64_t physical(uint64_t addr) const;

 private:
  struct Region {
    uint64_t base, end, row_bytes, rows;
    uint64_t first;  // rows of one plane: the first dimension other than 1
  };
  std::vector<Region> regions_;  // sorted by base, disjoint
  int64_t stick_ = 128;
};

}  // namespace spyre::sim
