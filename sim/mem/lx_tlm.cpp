// LX as a TLM-2.0 target, and the units' initiator side (lx_tlm.h).
#include "spyre/sim/lx_tlm.h"

#include <string>
#include <utility>

#include "spyre/sim/report.h"

namespace spyre::sim {

LxInitiator::LxInitiator(std::string who, Resolve resolve)
    : who_(std::move(who)), resolve_(std::move(resolve)), ext_(new LxAccessExt) {
  gp_.set_command(tlm::TLM_IGNORE_COMMAND);
  gp_.set_data_ptr(nullptr);
  gp_.set_data_length(0);
  gp_.set_streaming_width(0);
  gp_.set_byte_enable_ptr(nullptr);
  gp_.set_extension(ext_);  // owned by the payload
}

tlm::tlm_fw_transport_if<>* LxInitiator::fw() {
  if (!fw_) fw_ = resolve_();
  return fw_;
}

Cycle LxInitiator::access(Cycle start, Cycle dur, const LxRegions& regions, Cycle now) {
  ext_->start = start;
  ext_->dur = dur;
  ext_->now = now;
  ext_->regions = &regions;
  gp_.set_address(regions.empty() ? 0 : static_cast<uint64_t>(regions.front().base));
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  fw()->b_transport(gp_, delay);
  if (gp_.get_response_status() != tlm::TLM_OK_RESPONSE)
    SPYRE_FAIL("spyre/lx/response", who_,
               "the LX target did not book the access: " + gp_.get_response_string());
  return ext_->end;
}

uint8_t* LxInitiator::data() {
  if (dmi_) return dmi_;
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(0);
  tlm::tlm_dmi dmi;
  if (!fw()->get_direct_mem_ptr(gp, dmi) || !dmi.is_read_write_allowed() ||
      dmi.get_start_address() != 0 || !dmi.get_dmi_ptr())
    SPYRE_FAIL("spyre/lx/dmi", who_, "functional data needs read-write DMI to the whole LX");
  dmi_ = dmi.get_dmi_ptr();
  return dmi_;
}

LxModule::LxModule(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), socket("socket") {
  socket.register_b_transport(this, &LxModule::b_transport);
  socket.register_get_direct_mem_ptr(this, &LxModule::get_dmi);
}

void LxModule::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  LxAccessExt* e = gp.get_extension<LxAccessExt>();
  if (!e || !e->regions) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  e->end = lx_->access(e->start, e->dur, *e->regions, e->now);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool LxModule::get_dmi(int, tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.set_dmi_ptr(lx_->data());
  dmi.set_start_address(0);
  dmi.set_end_address(static_cast<uint64_t>(lx_->size_bytes()) - 1);
  dmi.allow_read_write();
  return true;
}

}  // namespace spyre::sim
