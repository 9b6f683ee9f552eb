#pragma once
// The rings in TLM-2.0. Every transfer (ring.send, ring.red, a multicast piece of a dma.load)
// is one transaction from the source core's network interface to the ring:
//
//   spyre.core_N.ni   RingNi: simple_initiator_socket_tagged "data_socket" -> spyre.ring_data,
//                     "reduce_socket" -> spyre.ring_reduce (the ring's "ni_socket", a
//                     multi_passthrough_target_socket; index = source core); "ring_in", a
//                     target for both rings' LX accesses at this core, passed on through its
//                     "lx_socket" to spyre.core_N.lx
//   spyre.ring_data   RingModule: places the transfer on its links (the closed form of ring.h:
//                     routes, per-link reservation, back-pressure, arbitration at the end of
//                     the cycle), and reaches every core's NI through "ni_out[N]"
//
// Base protocol, AT: BEGIN_REQ (zero delay, at the cycle of the request; length = bytes, a
// RingRequestExt with the source and the targets), END_REQ at once; BEGIN_RESP when the ring
// has placed the transfer (end of the cycle), the extension then holding the arrival at each
// target; the NI completes it on the backward path and hands the arrivals to the unit, which
// books the LX reads and writes through the ring: ring -> that core's NI -> its LX (the
// source read at the source core, each write at its destination), as LT bookings
// (lx_tlm.h). The links themselves are the ring's closed form, not transactions per hop.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "spyre/sim/lx_tlm.h"
#include "spyre/sim/ring.h"

namespace spyre::sim {

struct RingRequestExt : tlm::tlm_extension<RingRequestExt> {
  int src = 0;
  std::vector<int> targets;
  std::vector<RingArrival> arrivals;  // set by the ring with BEGIN_RESP
  size_t slot = 0;                    // the issuing NI's slot
  tlm::tlm_extension_base* clone() const override { return new RingRequestExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const RingRequestExt&>(other);
  }
};

// spyre.core_N.ni: the core's network interface, one RingPort per ring, and the way in for the
// rings' accesses to this core's LX.
class RingNi : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket_tagged<RingNi> data_socket, reduce_socket;
  tlm_utils::multi_passthrough_target_socket<RingNi> ring_in;  // from both rings' ni_out
  tlm_utils::simple_initiator_socket<RingNi> lx_socket;        // to this core's lx
  explicit RingNi(const sc_core::sc_module_name& name);
  RingPort& port(bool reduce) { return reduce ? reduce_ : data_; }

 private:
  class Side : public RingPort {
   public:
    Side(RingNi& ni, int tag) : ni_(ni), tag_(tag) {}
    void request(int src, std::vector<int> targets, uint64_t bytes, Placed placed) override;
    void placed(tlm::tlm_generic_payload& gp);

   private:
    struct Slot {
      tlm::tlm_generic_payload gp;
      Placed placed;
    };
    RingNi& ni_;
    int tag_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<size_t> free_;
  };
  tlm::tlm_sync_enum nb_transport_bw(int tag, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void to_lx(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool dmi_to_lx(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

  Side data_, reduce_;
};

// spyre.ring_data / spyre.ring_reduce: a Ring behind the NIs' target socket.
class RingModule : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<RingModule> ni_socket;  // [c]: core c's NI
  tlm_utils::multi_passthrough_initiator_socket<RingModule> ni_out;  // [c]: core c's NI
  RingModule(const sc_core::sc_module_name& name, Ring& ring, int64_t cores);
  LxPort& lx_port(int c) { return *lx_ports_[static_cast<size_t>(c)]; }
  const Ring& model() const { return ring_; }
  nlohmann::json stats() const { return ring_.stats(); }

 private:
  tlm::tlm_sync_enum fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                        sc_core::sc_time& delay);

  Ring& ring_;
  std::vector<std::unique_ptr<LxInitiator>> lx_ports_;
};

}  // namespace spyre::sim
