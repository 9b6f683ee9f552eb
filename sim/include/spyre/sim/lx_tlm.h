#pragma once
// LX as a TLM-2.0 target. Every unit that touches a core's scratchpad is an initiator bound to
// that core's spyre.core_N.lx:
//   spyre.core_N.lx_socket            the core's PT and SFP units (their operands)
//   spyre.core_N.dma_in.lx_socket     the load engine (pieces written into LX)
//   spyre.core_N.dma_out.lx_socket    the store engine (pieces read from LX)
//   spyre.core_N.ni.lx_socket         the rings, through the core's network interface
//                                     (ring.send and ring.red sources and destinations, the
//                                     landing of multicasts; ring_tlm.h)
// An access is the LX bank booking of lx.h (closed form, at instruction or piece granularity):
// b_transport of a payload with TLM_IGNORE_COMMAND and an LxAccessExt carrying the window
// [start, start + dur), the regions and the current cycle; the target answers with the end F
// of the booking in the extension (zero delay: the booking is a reservation, not a timed
// transfer). Functional data goes through DMI to the LX bytes (read-write, the whole LX),
// taken once per initiator.
#include <cstdint>
#include <functional>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "spyre/sim/lx.h"

namespace spyre::sim {

struct LxAccessExt : tlm::tlm_extension<LxAccessExt> {
  Cycle start = 0, dur = 0, now = 0;
  const LxRegions* regions = nullptr;
  Cycle end = 0;  // set by the target
  tlm::tlm_extension_base* clone() const override { return new LxAccessExt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const LxAccessExt&>(other);
  }
};

// An LxPort over an initiator socket; `resolve` gives the bound target's forward interface
// (called on first use, after elaboration). `who` names it in errors.
class LxInitiator : public LxPort {
 public:
  using Resolve = std::function<tlm::tlm_fw_transport_if<>*()>;
  LxInitiator(std::string who, Resolve resolve);
  Cycle access(Cycle start, Cycle dur, const LxRegions& regions, Cycle now) override;
  uint8_t* data() override;

 private:
  tlm::tlm_fw_transport_if<>* fw();

  std::string who_;
  Resolve resolve_;
  tlm::tlm_fw_transport_if<>* fw_ = nullptr;
  tlm::tlm_generic_payload gp_;
  LxAccessExt* ext_;
  uint8_t* dmi_ = nullptr;
};

// spyre.core_N.lx: the core's Lx (lx.h) behind a multi-passthrough target socket.
class LxModule : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<LxModule> socket;
  explicit LxModule(const sc_core::sc_module_name& name);
  void attach(Lx& lx) { lx_ = &lx; }
  const Lx& model() const { return *lx_; }
  nlohmann::json stats() const { return lx_->stats(); }  // per bank (lx.h)

 private:
  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_dmi(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

  Lx* lx_ = nullptr;
};

}  // namespace spyre::sim
