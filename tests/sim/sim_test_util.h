#pragma once
// Helpers for the chip-model tests: programs from assembly text, a default 4-core config.
#include <string>

#include "spyre/arch/arch.h"
#include "spyre/isa/format.h"
#include "spyre/sim/simulate.h"

namespace spyre::sim::test {

// The built-in "spyre" parameters (issue 1, PT 8x64, SFP 64/32 lanes + 8, DMA setup 16,
// 256/128 B/cycle, bursts 4096 B, words 128 B, DRAM 150 GB/s at 1.5 GHz = 100 B/cycle and
// 100 ns = 150 cycles, ring 128 B/cycle and 2 cycles per hop, barrier 32) with `cores` cores.
// The exact-cycle tests of this folder were written for the "fifo" DRAM model, so they select
// it explicitly (lpddr5 has its own tests in dram_test.cpp), and memory ports that never
// limit (timing_test.cpp tests the ports). Their cycles were worked out by hand at a 1.5 GHz
// clock (666.67 ps), which they keep; the preset's own clock is tested in arch_test.cpp.
inline arch::ArchConfig config(int cores = 4) {
  arch::ArchConfig cfg;
  cfg.cores = cores;
  cfg.clock_ghz = 1.5;
  cfg.dram_impl = "fifo";
  cfg.dram_tensor_layout = "row_major";  // the program's addresses (layout_test sets "stick")
  cfg.mem_port_gbps = 1e6;
  return cfg;
}

// `body` holds ".core N" sections; the header is added here.
inline isa::Program program(int cores, const std::string& body, uint64_t dram_bytes = 1 << 20) {
  return isa::assemble(".spyre 1\n.cores " + std::to_string(cores) + "\n.dram_bytes " +
                       std::to_string(dram_bytes) + "\n" + body);
}

inline SimResult run(const isa::Program& p, const arch::ArchConfig& cfg, SimOptions opts = {}) {
  DeviceMemory dram(p.dram_bytes, 0);
  return simulate(p, cfg, dram, opts);
}

inline uint64_t busy(const SimResult& r, int core, const char* queue) {
  return r.stats["chip"]["cores"][core][queue]["busy_cycles"].get<uint64_t>();
}
inline uint64_t wait(const SimResult& r, int core, const char* queue) {
  return r.stats["chip"]["cores"][core][queue]["wait_cycles"].get<uint64_t>();
}

// Core 0 fills a stick with 3.5 (f16), stores it to DRAM 0 and signals core 1; core 1 waits,
// loads it, negates it and stores it to DRAM 128 (2 cores, 4096 B of DRAM).
inline const char* const kProducerConsumer = R"(.kernel 0 produce
.kernel 1 consume
.core 0
.k 0
  sfp.fill cl=0 dt=f16 dst=0 dst_rs=64 dst_cs=1 rows=1 cols=64 value=3.5
  sync.sig q=sfp0 tok=0
  sync.wait q=dma_out tok=0
  dma.store lx=0 dram=0 bytes=128
  sync.sig q=dma_out tok=0 core=1
  halt
.core 1
.k 1
  sync.wait q=dma_in tok=0
  dma.load dram=0 lx=256 bytes=128
  sync.sig q=dma_in tok=1
  sync.wait q=sfp0 tok=1
  sfp.un cl=0 fn=neg dt=f16 dst=512 dst_rs=64 dst_cs=1 a=256 a_rs=64 a_cs=1 rows=1 cols=64
  sync.sig q=sfp0 tok=2
  sync.wait q=dma_out tok=2
  dma.store lx=512 dram=128 bytes=128
  halt
)";

}  // namespace spyre::sim::test
