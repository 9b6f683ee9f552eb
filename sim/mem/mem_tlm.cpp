// The device-memory boundary in TLM-2.0 (mem_tlm.h): DMA initiators, the interconnect, the
// built-in DRAM target.
#include "spyre/sim/mem_tlm.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {
DramRequestExt& ext_of(tlm::tlm_generic_payload& gp, const char* who) {
  DramRequestExt* e = gp.get_extension<DramRequestExt>();
  if (!e)
    SPYRE_FAIL("spyre/mem/protocol", who, "a transaction without a DramRequestExt reached it");
  return *e;
}

std::string range_of(const tlm::tlm_generic_payload& gp) {
  return "[" + std::to_string(gp.get_address()) + ", " +
         std::to_string(gp.get_address() + gp.get_data_length()) + ")";
}

// Runs `fn` at the first cycle at or after sc_time_stamp() + delay: now, if that is the
// driver's current cycle and `now_ok`; else as an event of that cycle.
// (A template, so the common immediate case builds no std::function.)
template <typename Fn>
void at_time(EventDriver& driver, const sc_core::sc_time& delay, bool now_ok, Fn&& fn) {
  EventQueue& q = driver.queue();
  if (now_ok && driver.in_cycle() && delay == sc_core::SC_ZERO_TIME) return fn();
  const Cycle c = driver.time_base().cycle_at_or_after(sc_core::sc_time_stamp() + delay);
  if (now_ok && driver.in_cycle() && c == q.now()) return fn();
  q.at(c, std::forward<Fn>(fn));
  driver.wake();
}
}  // namespace

// ---- DmaPort ----

DmaPort::DmaPort(const sc_core::sc_module_name& name, EventDriver& driver, int core, bool write)
    : sc_core::sc_module(name),
      socket("socket"),
      lx_socket("lx_socket"),
      lx(this->name(), [this] { return lx_socket.operator->(); }),
      driver_(driver),
      core_(core),
      write_(write) {
  socket.register_nb_transport_bw(this, &DmaPort::nb_transport_bw);
}

void DmaPort::submit(DramRequest req) {
  if (free_.empty()) {
    free_.push_back(slots_.size());
    slots_.push_back(std::make_unique<Slot>());
    Slot& s = *slots_.back();
    s.gp.set_mm(this);
    s.gp.set_extension(new DramRequestExt);
    s.gp.set_data_ptr(nullptr);
    s.gp.set_byte_enable_ptr(nullptr);
    s.gp.set_streaming_width(0);
  }
  const size_t i = free_.back();
  free_.pop_back();
  Slot& s = *slots_[i];
  s.landed = std::move(req.landed);
  tlm::tlm_generic_payload& gp = s.gp;
  gp.acquire();
  gp.set_command(write_ ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(req.addr);
  gp.set_data_length(static_cast<unsigned>(req.bytes));
  gp.set_streaming_width(static_cast<unsigned>(req.bytes));
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  DramRequestExt* e = gp.get_extension<DramRequestExt>();
  e->core = core_;
  e->cost_bytes = req.cost_bytes;
  e->slot = i;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  submitting_ = true;
  const tlm::tlm_sync_enum r = socket->nb_transport_fw(gp, phase, delay);
  submitting_ = false;
  if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP))
    return respond(gp, delay);
  if (r != tlm::TLM_UPDATED || phase != tlm::END_REQ)
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "spyre.mem must accept BEGIN_REQ with END_REQ at once");
}

tlm::tlm_sync_enum DmaPort::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                            sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_RESP)
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "unexpected phase " + std::string(phase.get_name()) + " on the backward path");
  respond(gp, delay);
  return tlm::TLM_COMPLETED;
}

void DmaPort::respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay) {
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE)
    SPYRE_FAIL("spyre/mem/response", std::string(name()),
               std::string(write_ ? "write " : "read ") + range_of(gp) +
                   " failed: " + gp.get_response_string());
  const size_t i = ext_of(gp, name()).slot;
  // Never inside submit(): the engine is still issuing the request.
  at_time(driver_, delay, !submitting_, [this, i] { land(i); });
}

void DmaPort::land(size_t i) {
  Callback landed = std::move(slots_[i]->landed);
  slots_[i]->gp.release();  // back to the pool unless the target still holds it
  landed();
}

void DmaPort::free(tlm::tlm_generic_payload* gp) { free_.push_back(ext_of(*gp, name()).slot); }

// ---- MemInterconnect ----

MemInterconnect::MemInterconnect(const sc_core::sc_module_name& name, uint64_t dram_bytes,
                                 const arch::ArchConfig& cfg)
    : sc_core::sc_module(name),
      dma_socket("dma_socket"),
      dram_socket("dram_socket"),
      dram_bytes_(dram_bytes),
      cores_per_port_(std::max<int64_t>(1, cfg.mem_cores_per_port)),
      ps_per_byte_(1e3 / std::max(1e-9, cfg.mem_port_gbps)),
      buffer_ps_(static_cast<double>(cfg.mem_port_buffer_bytes) * ps_per_byte_),
      ports_(static_cast<size_t>((cfg.cores + cores_per_port_ - 1) / cores_per_port_)) {
  dma_socket.register_nb_transport_fw(this, &MemInterconnect::fw);
  dma_socket.register_get_direct_mem_ptr(this, &MemInterconnect::get_dmi);
  dram_socket.register_nb_transport_bw(this, &MemInterconnect::bw);
  dram_socket.register_invalidate_direct_mem_ptr(this, &MemInterconnect::invalidate);
}

tlm::tlm_sync_enum MemInterconnect::fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time&) {
  if (phase != tlm::BEGIN_REQ)
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "unexpected phase " + std::string(phase.get_name()) + " from a DMA engine");
  if (gp.get_address() + gp.get_data_length() > dram_bytes_)
    SPYRE_FAIL("spyre/mem/address", std::string(name()),
               range_of(gp) + " lies outside the device memory of " + std::to_string(dram_bytes_) +
                   " bytes");
  ext_of(gp, name()).route = id;
  if (gp.is_write()) {
    write_bytes_ += gp.get_data_length();
    ++write_requests_;
  } else {
    read_bytes_ += gp.get_data_length();
    ++read_requests_;
  }
  waiting_.push_back(&gp);
  if (!in_request_ && !sending_) send_next();
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void MemInterconnect::send_next() {
  sending_ = true;
  while (!in_request_ && !waiting_.empty()) {
    tlm::tlm_generic_payload* gp = waiting_.front();
    waiting_.pop_front();
    in_request_ = gp;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = dram_socket->nb_transport_fw(*gp, phase, delay);
    if (r == tlm::TLM_ACCEPTED) break;  // END_REQ or BEGIN_RESP comes on the backward path
    if (r == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      in_request_ = nullptr;
      continue;
    }
    if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
      in_request_ = nullptr;
      if (r == tlm::TLM_UPDATED) {  // the response came on the return path: end it
        tlm::tlm_phase end = tlm::END_RESP;
        sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
        dram_socket->nb_transport_fw(*gp, end, zero);
      }
      respond(*gp, delay);
      continue;
    }
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "the DRAM target answered BEGIN_REQ with phase " + std::string(phase.get_name()));
  }
  sending_ = false;
}

void MemInterconnect::end_request() {
  in_request_ = nullptr;
  if (!sending_) send_next();  // else send_next()'s loop goes on
}

tlm::tlm_sync_enum MemInterconnect::bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ) {
    if (&gp == in_request_) end_request();
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP)
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "unexpected phase " + std::string(phase.get_name()) + " from the DRAM target");
  respond(gp, delay);
  if (&gp == in_request_) end_request();  // BEGIN_RESP implies END_REQ
  return tlm::TLM_COMPLETED;
}

sc_core::sc_time MemInterconnect::through_port(const tlm::tlm_generic_payload& gp,
                                               const sc_core::sc_time& ready) {
  const auto core =
      static_cast<size_t>(std::max(0, gp.get_extension<DramRequestExt>()->core) / cores_per_port_);
  Port& port = ports_[std::min(ports_.size() - 1, core)];
  const int dir = gp.is_write() ? 1 : 0;
  // The token bucket of mem_tlm.h, in ps: idle time up to the buffer's worth of data is banked
  // (the bucket starts full).
  const double t = static_cast<double>(ready.value());
  const double xfer = static_cast<double>(gp.get_data_length()) * ps_per_byte_;
  port.v[dir] = std::max(port.v[dir], t - buffer_ps_) + xfer;
  const sc_core::sc_time end =
      port.v[dir] > t ? sc_core::sc_time(std::ceil(port.v[dir]), sc_core::SC_PS) : ready;
  port.wait_ps[dir] += static_cast<uint64_t>((end - ready).value());
  port.bytes[dir] += gp.get_data_length();
  return end;
}

void MemInterconnect::respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay) {
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time d = through_port(gp, now + delay) - now;
  dma_socket[ext_of(gp, name()).route]->nb_transport_bw(gp, phase, d);
}

nlohmann::json MemInterconnect::port_stats() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Port& p : ports_)
    out.push_back({{"read_bytes", p.bytes[0]},
                   {"write_bytes", p.bytes[1]},
                   {"read_wait_ns", static_cast<double>(p.wait_ps[0]) / 1e3},
                   {"write_wait_ns", static_cast<double>(p.wait_ps[1]) / 1e3}});
  return out;
}

bool MemInterconnect::get_dmi(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  return dram_socket->get_direct_mem_ptr(gp, dmi);
}

void MemInterconnect::invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
  if (dmi_taken_ && start < dram_bytes_ && end >= start)
    SPYRE_FAIL("spyre/mem/dmi", std::string(name()),
               "the DRAM target invalidated the DMI pointer the functional run uses");
}

uint8_t* MemInterconnect::dmi_whole() {
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(0);
  gp.set_data_length(0);
  tlm::tlm_dmi dmi;
  const bool ok = dram_socket->get_direct_mem_ptr(gp, dmi);
  if (!ok || !dmi.is_read_write_allowed() || dmi.get_start_address() != 0 ||
      (dram_bytes_ > 0 && dmi.get_end_address() < dram_bytes_ - 1) || !dmi.get_dmi_ptr())
    SPYRE_FAIL("spyre/mem/dmi", std::string(name()),
               "a functional run needs read-write DMI to the device memory [0, " +
                   std::to_string(dram_bytes_) +
                   ") from the DRAM target (a timing-only run does not)");
  dmi_taken_ = true;
  return dmi.get_dmi_ptr();
}

nlohmann::json MemInterconnect::stats() const {
  return {{"impl", "external"},
          {"read_bytes", read_bytes_},
          {"write_bytes", write_bytes_},
          {"read_requests", read_requests_},
          {"write_requests", write_requests_}};
}

// ---- DramTarget ----

DramTarget::DramTarget(const sc_core::sc_module_name& name, Env& env, EventDriver& driver,
                       DeviceMemory* image)
    : sc_core::sc_module(name),
      socket("socket"),
      env_(env),
      driver_(driver),
      image_(image),
      model_(make_dram(env.cfg.dram_impl, env)) {
  socket.register_nb_transport_fw(this, &DramTarget::fw);
  socket.register_get_direct_mem_ptr(this, &DramTarget::get_dmi);
  if (env.cfg.dram_impl == "lpddr5")
    for (int64_t c = 0; c < env.cfg.dram_channels; ++c)
      channels_.push_back(std::make_unique<Channel>(
          sc_core::sc_module_name(("ch" + std::to_string(c)).c_str()), *this, static_cast<int>(c)));
}

tlm::tlm_sync_enum DramTarget::fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ)
    SPYRE_FAIL("spyre/mem/protocol", std::string(name()),
               "unexpected phase " + std::string(phase.get_name()));
  at_time(driver_, delay, true, [this, id, &gp] { accept(id, gp); });
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void DramTarget::accept(int id, tlm::tlm_generic_payload& gp) {
  const DramRequestExt& e = ext_of(gp, name());
  DramRequest r;
  r.core = e.core;
  r.bytes = gp.get_data_length();
  r.cost_bytes = e.cost_bytes;
  r.addr = gp.get_address();
  r.write = gp.is_write();
  r.landed = [this, id, &gp] {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket[id]->nb_transport_bw(gp, phase, delay);
  };
  model_->submit(std::move(r));
}

bool DramTarget::get_dmi(int, tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  if (!image_ || image_->empty()) return false;
  dmi.set_dmi_ptr(image_->data());
  dmi.set_start_address(0);
  dmi.set_end_address(image_->size() - 1);
  dmi.allow_read_write();
  return true;
}

nlohmann::json DramTarget::Channel::stats() const {
  const nlohmann::json s = dram_.model().stats();
  if (!s.contains("channels") || static_cast<size_t>(index_) >= s["channels"].size()) return {};
  return s["channels"][static_cast<size_t>(index_)];
}

}  // namespace spyre::sim
