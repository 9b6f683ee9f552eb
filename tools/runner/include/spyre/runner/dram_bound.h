#pragma once
// The DRAM bound of a kernel: its bytes at the bandwidth of the chip's own DRAM model at the
// kernel's read/write mix (the V-curve of tools/bench/dram). The bandwidth is simulated: every
// core streams kVcurveChunks chunks of 32 KiB, the mix's share of them dma.load, the rest
// dma.store, at once, from regions on power-of-two boundaries (as an even split of a tensor
// has), with no arithmetic and no synchronisation. Address patterns other than the V-curve's
// can be a little faster or slower (bank and row conflicts), so a kernel may reach over 100 %.
#include <cstdint>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"

namespace spyre::runner {

// The streaming program for all of cfg's cores (one instruction per chunk per core, then
// halt); chunks cycle through as many LX slots as fit, at most 32.
isa::Program dram_stream_program(const arch::ArchConfig& cfg, uint64_t read_bytes,
                                 uint64_t write_bytes, int64_t chunk_bytes = 32768);

constexpr int64_t kVcurveChunks = 30;  // per core: 960 KiB, the V-curve bench's volume

struct DramBound {
  double read_fraction = 0;  // of the V-curve point used: loads / kVcurveChunks
  double gbps = 0;           // the V-curve's bandwidth there, (read + write) / time
  uint64_t cycles = 0;       // read_bytes + write_bytes at that bandwidth
};
// The bound of moving `read_bytes` and `write_bytes` on `cfg` (all its cores); the V-curve
// point nearest the mix is simulated.
DramBound dram_bound(const arch::ArchConfig& cfg, uint64_t read_bytes, uint64_t write_bytes);

}  // namespace spyre::runner
