#pragma once
// The device-memory boundary in TLM-2.0, base protocol, AT 4-phase, generic payloads:
//
//   spyre.core_N.dma_in  ─┐  (DmaPort: simple_initiator_socket "socket")
//   spyre.core_N.dma_out ─┼─> spyre.mem (MemInterconnect: multi_passthrough_target_socket
//   ... every DMA engine ─┘     "dma_socket"; simple_initiator_socket "dram_socket")
//                                  └─> spyre.dram (DramTarget, multi_passthrough_target_socket
//                                        "socket", the shape DRAMSys presents) or any TLM-2.0
//                                        target the user binds to spyre.mem.dram_socket
//
// One DMA request (dma.h: a piece of at most dma_burst_bytes) is one transaction: command
// read (dma.load, dma.gather) or write (dma.store, dma.scatter), address = the piece's DRAM
// byte address, length = its bytes. Timing-only and functional payloads alike carry no data
// pointer (data pointer null, length set): the data moves when the instruction completes,
// through the DMI pointer the chip takes once over [0, dram_bytes) at the start of a
// functional run. A DramRequestExt (ignorable by other targets) carries the issuing core and
// the bytes the DRAM moves (the piece rounded up to dram.word_bytes).
//
// Phases and time: a DMA engine sends BEGIN_REQ with zero delay at the sc_time of its cycle;
// spyre.mem accepts at once (END_REQ, TLM_UPDATED), queues, and forwards one request at a time
// downstream, each after the END_REQ (or response) of the one before (request exclusion).
// The target answers BEGIN_RESP (on the backward path, or TLM_COMPLETED / TLM_UPDATED on the
// return path) with a delay; the data has landed at the first cycle at or after sc_time_stamp()
// + delay (TimeBase::cycle_at_or_after), when the engine's landed() runs. The built-in target
// answers in the driver's cycle with zero delay, so its timing is the DRAM model's, unchanged.
// An error response (not TLM_OK_RESPONSE) fails the run: spyre/mem/response.
//
// Memory ports: core c reaches the DRAM through port floor(c / mem.cores_per_port), which
// carries mem.port_gbps of data per direction in the long run. spyre.mem applies it on the
// response path as a token bucket of mem.port_buffer_bytes (D) at that rate (R): with v the
// port's virtual finish time, a transaction of B bytes ready at t (the target's response time)
//     v = max(v, t - D / R) + B / R,   completes at max(t, v)
// so an uncontended port adds no latency (B <= D), uneven delivery within the buffer passes at
// once, and a port kept busy passes its cores' data at R. It holds for any target on dram_socket.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "spyre/sim/dram.h"
#include "spyre/sim/kernel.h"
#include "spyre/sim/lx_tlm.h"
#include "spyre/sim/simulate.h"

namespace spyre::sim {

struct DramRequestExt : tlm::tlm_extension<DramRequestExt> {
  int core = 0;             // the issuing core
  uint64_t cost_bytes = 0;  // bytes the DRAM moves (whole words)
  int route = -1;           // spyre.mem: the dma_socket index the request came in on
  size_t slot = 0;          // the issuing DmaPort's slot
  tlm::tlm_extension_base* clone() const override { return new DramRequestExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const DramRequestExt&>(other);
  }
};

// A DMA engine's memory port: turns DramRequests into transactions on its initiator socket.
// Its payloads are pooled and have a memory manager (this port), as AT interconnects expect:
// a payload returns to the pool when the last holder releases it.
class DmaPort : public sc_core::sc_module, public MemPort, public tlm::tlm_mm_interface {
 public:
  tlm_utils::simple_initiator_socket<DmaPort> socket;
  tlm_utils::simple_initiator_socket<DmaPort> lx_socket;  // to its core's LX (lx_tlm.h)
  LxInitiator lx;
  DmaPort(const sc_core::sc_module_name& name, EventDriver& driver, int core, bool write);
  void submit(DramRequest req) override;
  void free(tlm::tlm_generic_payload* gp) override;  // tlm_mm_interface

 private:
  struct Slot {
    tlm::tlm_generic_payload gp;
    Callback landed;
  };
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay);
  void land(size_t slot);

  EventDriver& driver_;
  int core_;
  bool write_;
  bool submitting_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<size_t> free_;
};

// spyre.mem: every DMA engine's transactions to the one DRAM target bound to dram_socket.
// Checks each address range against the program's device memory (spyre/mem/address), counts
// bytes and requests, keeps the base protocol's request exclusion towards the target, routes
// responses back, and forwards DMI.
class MemInterconnect : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MemInterconnect> dma_socket;
  tlm_utils::simple_initiator_socket<MemInterconnect> dram_socket;
  MemInterconnect(const sc_core::sc_module_name& name, uint64_t dram_bytes,
                  const arch::ArchConfig& cfg);
  // The target's DMI pointer to [0, dram_bytes) for reads and writes; fails (spyre/mem/dmi)
  // when it grants less. Called once by a functional run.
  uint8_t* dmi_whole();
  uint64_t read_bytes() const { return read_bytes_; }
  uint64_t write_bytes() const { return write_bytes_; }
  nlohmann::json stats() const;       // what the interconnect saw (the stats of an external target)
  nlohmann::json port_stats() const;  // per memory port and direction: bytes, waiting

 private:
  tlm::tlm_sync_enum fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                        sc_core::sc_time& delay);
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                        sc_core::sc_time& delay);
  bool get_dmi(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  void invalidate(sc_dt::uint64 start, sc_dt::uint64 end);
  void send_next();
  void end_request();
  void respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay);

  // The port token bucket (header comment): when the response ready at `ready` completes.
  sc_core::sc_time through_port(const tlm::tlm_generic_payload& gp, const sc_core::sc_time& ready);

  uint64_t dram_bytes_;
  int64_t cores_per_port_;
  double ps_per_byte_;  // one port, one direction
  double buffer_ps_;    // mem.port_buffer_bytes at the port rate
  struct Port {
    double v[2] = {-1e300, -1e300};  // read, write: the virtual finish time, ps
    uint64_t bytes[2] = {0, 0};
    uint64_t wait_ps[2] = {0, 0};  // time responses waited for the port
  };
  std::vector<Port> ports_;
  std::deque<tlm::tlm_generic_payload*> waiting_;
  tlm::tlm_generic_payload* in_request_ = nullptr;  // sent, END_REQ not yet seen
  bool sending_ = false;                            // inside send_next()
  bool dmi_taken_ = false;
  uint64_t read_bytes_ = 0, write_bytes_ = 0, read_requests_ = 0, write_requests_ = 0;
};

// spyre.dram: a built-in DRAM model (dram.impl: lpddr5, fifo) as an AT target. It grants DMI
// to the device memory image of a functional run. Its channels (lpddr5: dram.channels) are
// the child modules ch0, ch1, ...
class DramTarget : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<DramTarget> socket;
  // `image`: the device memory (program.dram_bytes long), null in timing-only runs.
  DramTarget(const sc_core::sc_module_name& name, Env& env, EventDriver& driver,
             DeviceMemory* image);
  DramModel& model() { return *model_; }
  const DramModel& model() const { return *model_; }

  class Channel : public sc_core::sc_module {  // spyre.dram.chK
   public:
    Channel(const sc_core::sc_module_name& name, const DramTarget& dram, int index)
        : sc_core::sc_module(name), dram_(dram), index_(index) {}
    nlohmann::json stats() const;  // its entry of the model's "channels" stats
   private:
    const DramTarget& dram_;
    int index_;
  };

 private:
  tlm::tlm_sync_enum fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                        sc_core::sc_time& delay);
  bool get_dmi(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  void accept(int id, tlm::tlm_generic_payload& gp);

  Env& env_;
  EventDriver& driver_;
  DeviceMemory* image_;
  std::unique_ptr<DramModel> model_;
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace spyre::sim
