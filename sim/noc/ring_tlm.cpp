// The rings in TLM-2.0 (ring_tlm.h): the cores' network interfaces and the ring targets.
#include "spyre/sim/ring_tlm.h"

#include <utility>

#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {
RingRequestExt& ext_of(tlm::tlm_generic_payload& gp, const char* who) {
  RingRequestExt* e = gp.get_extension<RingRequestExt>();
  if (!e) SPYRE_FAIL("spyre/ring/protocol", who, "a transaction without a RingRequestExt");
  return *e;
}
}  // namespace

RingNi::RingNi(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name),
      data_socket("data_socket"),
      reduce_socket("reduce_socket"),
      ring_in("ring_in"),
      lx_socket("lx_socket"),
      data_(*this, 0),
      reduce_(*this, 1) {
  data_socket.register_nb_transport_bw(this, &RingNi::nb_transport_bw, 0);
  reduce_socket.register_nb_transport_bw(this, &RingNi::nb_transport_bw, 1);
  ring_in.register_b_transport(this, &RingNi::to_lx);
  ring_in.register_get_direct_mem_ptr(this, &RingNi::dmi_to_lx);
}

void RingNi::to_lx(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  lx_socket->b_transport(gp, delay);
}

bool RingNi::dmi_to_lx(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  return lx_socket->get_direct_mem_ptr(gp, dmi);
}

void RingNi::Side::request(int src, std::vector<int> targets, uint64_t bytes, Placed placed) {
  if (free_.empty()) {
    free_.push_back(slots_.size());
    slots_.push_back(std::make_unique<Slot>());
    Slot& s = *slots_.back();
    s.gp.set_extension(new RingRequestExt);
    s.gp.set_command(tlm::TLM_WRITE_COMMAND);
    s.gp.set_data_ptr(nullptr);
    s.gp.set_byte_enable_ptr(nullptr);
  }
  const size_t i = free_.back();
  free_.pop_back();
  Slot& s = *slots_[i];
  s.placed = std::move(placed);
  s.gp.set_address(0);
  s.gp.set_data_length(static_cast<unsigned>(bytes));
  s.gp.set_streaming_width(static_cast<unsigned>(bytes));
  s.gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  RingRequestExt* e = s.gp.get_extension<RingRequestExt>();
  e->src = src;
  e->targets = std::move(targets);
  e->arrivals.clear();
  e->slot = i;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  auto& socket = tag_ ? ni_.reduce_socket : ni_.data_socket;
  const tlm::tlm_sync_enum r = socket->nb_transport_fw(s.gp, phase, delay);
  if (r != tlm::TLM_UPDATED || phase != tlm::END_REQ)
    SPYRE_FAIL("spyre/ring/protocol", std::string(ni_.name()),
               "the ring must accept BEGIN_REQ with END_REQ at once");
}

void RingNi::Side::placed(tlm::tlm_generic_payload& gp) {
  const RingRequestExt& e = ext_of(gp, ni_.name());
  Placed placed = std::move(slots_[e.slot]->placed);
  free_.push_back(e.slot);
  placed(e.arrivals);
}

tlm::tlm_sync_enum RingNi::nb_transport_bw(int tag, tlm::tlm_generic_payload& gp,
                                           tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase != tlm::BEGIN_RESP || gp.get_response_status() != tlm::TLM_OK_RESPONSE)
    SPYRE_FAIL("spyre/ring/protocol", std::string(name()),
               "expected an OK BEGIN_RESP, got phase " + std::string(phase.get_name()));
  (tag ? reduce_ : data_).placed(gp);
  return tlm::TLM_COMPLETED;
}

RingModule::RingModule(const sc_core::sc_module_name& name, Ring& ring, int64_t cores)
    : sc_core::sc_module(name), ni_socket("ni_socket"), ni_out("ni_out"), ring_(ring) {
  ni_socket.register_nb_transport_fw(this, &RingModule::fw);
  for (int c = 0; c < cores; ++c)
    lx_ports_.push_back(
        std::make_unique<LxInitiator>(std::string(this->name()) + " to core " + std::to_string(c),
                                      [this, c] { return ni_out[c]; }));
}

tlm::tlm_sync_enum RingModule::fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ || delay != sc_core::SC_ZERO_TIME)
    SPYRE_FAIL("spyre/ring/protocol", std::string(name()),
               "expected BEGIN_REQ with zero delay, got phase " + std::string(phase.get_name()));
  RingRequestExt& e = ext_of(gp, name());
  ring_.request(e.src, std::move(e.targets), gp.get_data_length(),
                [this, id, &gp, &e](const std::vector<RingArrival>& arrivals) {
                  e.arrivals = arrivals;
                  gp.set_response_status(tlm::TLM_OK_RESPONSE);
                  tlm::tlm_phase resp = tlm::BEGIN_RESP;
                  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
                  ni_socket[id]->nb_transport_bw(gp, resp, zero);
                });
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

}  // namespace spyre::sim
