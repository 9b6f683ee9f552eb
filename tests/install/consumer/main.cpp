// Assembles a load-then-store program, simulates it on the built-in "spyre" chip and the
// "tiny" preset (both compiled into the library), and prints the cycles: what a C++ user of the
// installed package does with spyre::sim.
#include <cstdio>

#include "spyre/arch/arch.h"
#include "spyre/isa/format.h"
#include "spyre/sim/simulate.h"

int main() {
  const char* text =
      ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 copy\n"
      ".core 0\n.k 0\n  dma.load dram=0 lx=0 bytes=4096\n  sync.sig q=dma_in tok=0\n"
      "  sync.wait q=dma_out tok=0\n  dma.store lx=0 dram=0 bytes=4096\n  halt\n";
  const spyre::isa::Program p = spyre::isa::assemble(text, "consumer.s");
  for (const char* arch : {"spyre", "tiny"}) {
    spyre::sim::DeviceMemory dram(p.dram_bytes, 0);
    spyre::sim::SimOptions opts;
    const auto r = spyre::sim::simulate(p, spyre::arch::load_arch(arch), dram, opts);
    std::printf("%s: %llu cycles\n", arch, static_cast<unsigned long long>(r.cycles));
    if (r.cycles == 0) return 1;
  }
  return 0;
}
