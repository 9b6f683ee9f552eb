#pragma once
// The chip as a SystemC module tree (names as the configuration keys and the trace tracks):
//
//   spyre                  ChipModule: the chip of one program run
//   spyre.sched            EventDriver: runs the chip's event queue on the kernel
//   spyre.core_N           CoreModule (N < arch cores): sequencer, queues, PT, SFP
//   spyre.core_N.dma_in    DmaPort: the load engine's TLM-2.0 initiator (mem_tlm.h)
//   spyre.core_N.dma_out   DmaPort: the store engine's
//   spyre.core_N.lx        LxModule: the core's scratchpad, a TLM-2.0 target (lx_tlm.h)
//   spyre.core_N.ni        RingNi: the core's network interface to both rings (ring_tlm.h)
//   spyre.ring_data        RingModule: the data ring (ring.send, multicasts)
//   spyre.ring_reduce      RingModule: the reduce ring (ring.red)
//   spyre.barrier          BarrierModule: the chip-wide barrier
//   spyre.mem              MemInterconnect: DMA engines -> device memory
//   spyre.dram             DramTarget (built-in, dram.impl), absent with DramBinding::External
//   spyre.dram.chK         its channels (lpddr5)
//
// The model's logic is in plain classes (Chip, Core, DmaEngine, Lx, Ring, DramModel) that the
// modules own or refer to; unit tests drive those without the kernel.
//
// Bringing your own DRAM: construct with DramBinding::External and bind any TLM-2.0 AT target
// (base protocol) to dram_socket() before sc_start. A functional run then takes read-write
// DMI to [0, program.dram_bytes) from it; the program's data segments are written there at
// the start, and the caller reads results from it after run() (the data effects may run on a
// second thread until then: sim/README.md; the target leaves that memory alone meanwhile).
// SimResult's stats "dram" are then what the interconnect counted (impl "external").
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "spyre/sim/chip.h"
#include "spyre/sim/data_worker.h"
#include "spyre/sim/device_layout.h"
#include "spyre/sim/kernel.h"
#include "spyre/sim/lx_tlm.h"
#include "spyre/sim/mem_tlm.h"
#include "spyre/sim/ring_tlm.h"
#include "spyre/sim/simulate.h"

namespace spyre::sim {

enum class DramBinding { BuiltIn, External };

class CoreModule : public sc_core::sc_module {
 public:
  CoreModule(const sc_core::sc_module_name& name, EventDriver& driver, int id);
  DmaPort dma_in, dma_out;
  LxModule lx;
  RingNi ni;
  tlm_utils::simple_initiator_socket<CoreModule> lx_socket;  // PT and SFP -> lx
  LxInitiator units_lx;
  int id() const { return id_; }
  const Core& model() const { return *core_; }
  void attach(Core& core) {
    core_ = &core;
    lx.attach(core.lx());
  }

 private:
  int id_;
  const Core* core_ = nullptr;
};

class BarrierModule : public sc_core::sc_module {
 public:
  explicit BarrierModule(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {}
};

class ChipModule : public sc_core::sc_module {
 public:
  // `image`: the device memory of a built-in DRAM, grown to program.dram_bytes if shorter in a
  // functional run; not touched when timing only (an 8B model's 16 GB of weights need no host
  // memory) or External. The config is copied; the program must outlive
  // the module. Throws spyre::Error for an invalid config or program, or one the config cannot
  // run (cores), before building anything.
  ChipModule(const sc_core::sc_module_name& name, const isa::Program& program,
             const arch::ArchConfig& cfg, const SimOptions& opts, DeviceMemory* image,
             DramBinding binding = DramBinding::BuiltIn);
  ~ChipModule() override;
  // spyre.mem's initiator towards device memory; bound to spyre.dram unless External.
  tlm_utils::simple_initiator_socket<MemInterconnect>& dram_socket() { return mem_.dram_socket; }
  // sc_start() until the program ends; throws spyre::Error (deadlock, watchdog, a model
  // error). Call once.
  SimResult run();

 private:
  void start();  // the first event (cycle 0): DMI, data segments, the cores

  const arch::ArchConfig cfg_;
  const DeviceLayout layout_;  // dram.tensor_layout; Env points at it
  const SimOptions opts_;
  EventQueue q_;
  Env env_;
  EventDriver driver_;
  MemInterconnect mem_;
  std::unique_ptr<DramTarget> dram_;
  std::vector<std::unique_ptr<CoreModule>> cores_;
  Chip chip_;
  RingModule ring_data_, ring_reduce_;
  BarrierModule barrier_;
  // Last: stopped and joined before the memory its effects touch goes.
  std::unique_ptr<DataWorker> data_;
};

}  // namespace spyre::sim
