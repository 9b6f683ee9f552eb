// The chip as a SystemC module tree, its TLM-2.0 device-memory boundary, and a DRAM target
// written here against the standard TLM-2.0 headers only, bound in place of the built-in one.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "sim_test_util.h"
#include "spyre/error.h"
#include "spyre/sim/chip_module.h"

namespace spyre::sim {
namespace {

using test::config;
using test::program;

// An AT memory with a fixed latency: END_REQ at once (or, with `accept_time`, TLM_ACCEPTED
// and END_REQ that much later), BEGIN_RESP `latency` after the request; it owns its bytes and
// grants DMI to them (unless `dmi` is false). It counts BEGIN_REQs that arrive while an
// earlier request has not had its END_REQ (a base-protocol violation by the initiator).
class FixedLatencyMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<FixedLatencyMemory> socket;
  FixedLatencyMemory(const sc_core::sc_module_name& name, size_t bytes, sc_core::sc_time latency,
                     bool dmi = true)
      : sc_core::sc_module(name),
        socket("socket"),
        bytes_(bytes, 0),
        latency_(latency),
        dmi_(dmi),
        peq_(this, &FixedLatencyMemory::respond) {
    socket.register_nb_transport_fw(this, &FixedLatencyMemory::nb_transport_fw);
    socket.register_get_direct_mem_ptr(this, &FixedLatencyMemory::get_direct_mem_ptr);
  }
  std::vector<uint8_t>& bytes() { return bytes_; }
  sc_core::sc_time accept_time = sc_core::SC_ZERO_TIME;
  int requests = 0;
  int exclusion_violations = 0;

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;  // END_RESP
    ++requests;
    peq_.notify(gp, tlm::BEGIN_RESP, delay + latency_);
    if (accept_time == sc_core::SC_ZERO_TIME) {
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    if (open_request_) ++exclusion_violations;
    open_request_ = true;
    peq_.notify(gp, tlm::END_REQ, delay + accept_time);
    return tlm::TLM_ACCEPTED;
  }
  void respond(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& what) {
    tlm::tlm_phase phase = what;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    if (what == tlm::END_REQ) {
      open_request_ = false;
      socket->nb_transport_bw(gp, phase, zero);
      return;
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    socket->nb_transport_bw(gp, phase, zero);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
    if (!dmi_) return false;
    dmi.set_dmi_ptr(bytes_.data());
    dmi.set_start_address(0);
    dmi.set_end_address(bytes_.size() - 1);
    dmi.allow_read_write();
    return true;
  }

  std::vector<uint8_t> bytes_;
  bool open_request_ = false;
  sc_core::sc_time latency_;
  bool dmi_;
  tlm_utils::peq_with_cb_and_phase<FixedLatencyMemory> peq_;
};

// 4 cores, each loads 16 KiB (4 bursts) and stores it 64 KiB further on.
isa::Program streaming() {
  std::string body;
  for (int c = 0; c < 4; ++c) {
    const int src = c * 16384, dst = 65536 + c * 16384;
    body += ".core " + std::to_string(c) + "\n  dma.load dram=" + std::to_string(src) +
            " lx=0 bytes=16384\n  sync.sig q=dma_in tok=0\n  sync.wait q=dma_out tok=0\n" +
            "  dma.store lx=0 dram=" + std::to_string(dst) + " bytes=16384\n  halt\n";
  }
  return program(4, body, 1 << 17);
}

// The "fifo" model with next to no bandwidth limit: a request lands one cycle (its service,
// rounded up to whole cycles: dram.h) plus dram.latency_ns after it arrives.
arch::ArchConfig fast_fifo() {
  arch::ArchConfig cfg = config(4);
  cfg.dram_bw_gbps = 1e6;
  cfg.dram_latency_ns = 100;  // 150 cycles at 1.5 GHz
  return cfg;
}
// The same latency as a fixed SystemC delay: 100 ns plus one period, rounded down to whole ps
// (666 ps), so a request made at cycle n lands at cycle n + 151 as with the fifo above.
const sc_core::sc_time kFixedLatency(100'666, sc_core::SC_PS);

TEST(ChipModule, IsATreeOfNamedModulesThatScFindObjectFinds) {
  SimContext ctx;
  arch::ArchConfig cfg = config(4);
  cfg.dram_impl = "lpddr5";
  const isa::Program p = program(4, test::kProducerConsumer, 4096);
  DeviceMemory image(p.dram_bytes, 0);
  ChipModule chip("spyre", p, cfg, SimOptions{}, &image);
  for (const char* name : {"spyre",
                           "spyre.sched",
                           "spyre.core_0",
                           "spyre.core_3",
                           "spyre.core_3.dma_in",
                           "spyre.core_3.dma_out",
                           "spyre.core_3.lx",
                           "spyre.core_3.lx_socket",
                           "spyre.core_3.dma_in.lx_socket",
                           "spyre.ring_data.ni_out",
                           "spyre.core_3.ni.ring_in",
                           "spyre.core_3.ni",
                           "spyre.core_3.ni.data_socket",
                           "spyre.ring_reduce.ni_socket",
                           "spyre.ring_data",
                           "spyre.ring_reduce",
                           "spyre.barrier",
                           "spyre.mem",
                           "spyre.dram",
                           "spyre.dram.ch0",
                           "spyre.dram.ch15"})
    EXPECT_NE(sc_core::sc_find_object(name), nullptr) << name;
  EXPECT_EQ(sc_core::sc_find_object("spyre.core_4"), nullptr);
  EXPECT_EQ(sc_core::sc_find_object("spyre.dram.ch16"), nullptr);
  auto* core = dynamic_cast<CoreModule*>(sc_core::sc_find_object("spyre.core_1"));
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->id(), 1);
  EXPECT_NE(dynamic_cast<DmaPort*>(sc_core::sc_find_object("spyre.core_1.dma_in")), nullptr);
  const SimResult r = chip.run();
  EXPECT_EQ(core->model().halt_cycle(), r.cycles);  // core 1 halts last
  auto* lx = dynamic_cast<LxModule*>(sc_core::sc_find_object("spyre.core_1.lx"));
  ASSERT_NE(lx, nullptr);
  EXPECT_EQ(lx->stats(), r.stats["chip"]["cores"][1]["lx"]["banks"]);
  auto* ch = dynamic_cast<DramTarget::Channel*>(sc_core::sc_find_object("spyre.dram.ch0"));
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->stats(), r.stats["chip"]["dram"]["channels"][0]);
  // the stats name the modules they describe by their paths
  for (const auto& path :
       {r.stats["chip"]["cores"][1]["module"], r.stats["chip"]["dram"]["module"],
        r.stats["chip"]["dram"]["channels"][5]["module"], r.stats["chip"]["ring"]["module"],
        r.stats["chip"]["reduce_ring"]["module"]})
    EXPECT_NE(sc_core::sc_find_object(path.get<std::string>().c_str()), nullptr) << path;
  EXPECT_EQ(r.stats["chip"]["cores"][1]["module"], core->name());
  EXPECT_EQ(r.stats["chip"]["dram"]["channels"][5]["module"], "spyre.dram.ch5");
}

// An initiator of the test's own, bound to an LxModule: bookings through the socket give what
// the plain Lx gives for the same sequence, and DMI reaches its bytes.
struct LxUserModule : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<LxUserModule> socket;
  LxInitiator port;
  explicit LxUserModule(const sc_core::sc_module_name& n)
      : sc_core::sc_module(n),
        socket("socket"),
        port(name(), [this] { return socket.operator->(); }) {}
};

TEST(LxModule, BooksThroughItsTargetSocketAsThePlainLxDoes) {
  arch::ArchConfig cfg = config(1);
  Lx plain(cfg), behind(cfg);
  SimContext ctx;
  LxModule lx("lx");
  lx.attach(behind);
  LxUserModule user("user");
  user.socket.bind(lx.socket);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate
  const std::vector<LxRegions> accesses = {
      {LxRegion{0, 65536}}, {LxRegion{0, 4096}}, {LxRegion{128, 64, 8, 512, 2}}, {LxRegion{0, 64}}};
  Cycle t = 0, stretched = 0;
  for (const auto& a : accesses) {
    const Cycle f = plain.access(t, 10, a, t);
    EXPECT_EQ(user.port.access(t, 10, a, t), f);
    stretched += f - (t + 10);
    t += 3;
  }
  EXPECT_EQ(lx.stats(), plain.stats());
  EXPECT_GT(stretched, 0u);  // the bookings contended, so the order through the socket mattered
  user.port.data()[100] = 42;
  EXPECT_EQ(behind.data()[100], 42);
}

TEST(RingModule, ATransferFromACoresNetworkInterfaceArrivesAsOnThePlainRing) {
  const arch::ArchConfig cfg = config(4);
  std::vector<RingArrival> plain_arrivals, tlm_arrivals;
  {  // the plain ring on a bare queue
    EventQueue q;
    Ring ring(cfg, &q);
    q.at(5, [&] {
      ring.request(0, {1, 3}, 4096, [&](const std::vector<RingArrival>& a) { plain_arrivals = a; });
    });
    q.run_all();
  }
  SimContext ctx;
  EventQueue q;
  EventDriver driver("sched", q, TimeBase(cfg.clock_ghz), 0);
  Ring data(cfg, &q), reduce(cfg, &q);
  RingModule ring_data("ring_data", data, 4), ring_reduce("ring_reduce", reduce, 4);
  std::vector<std::unique_ptr<Lx>> lx;
  std::vector<std::unique_ptr<LxModule>> lx_modules;
  std::vector<std::unique_ptr<RingNi>> ni;
  for (int c = 0; c < 4; ++c) {
    lx.push_back(std::make_unique<Lx>(cfg));
    lx_modules.push_back(std::make_unique<LxModule>(("lx" + std::to_string(c)).c_str()));
    lx_modules.back()->attach(*lx.back());
    ni.push_back(std::make_unique<RingNi>(("ni" + std::to_string(c)).c_str()));
    ni.back()->data_socket.bind(ring_data.ni_socket);
    ni.back()->reduce_socket.bind(ring_reduce.ni_socket);
    ni.back()->lx_socket.bind(lx_modules.back()->socket);
    ring_data.ni_out.bind(ni.back()->ring_in);
    ring_reduce.ni_out.bind(ni.back()->ring_in);
  }
  q.at(5, [&] {
    ni[0]->port(false).request(0, {1, 3}, 4096,
                               [&](const std::vector<RingArrival>& a) { tlm_arrivals = a; });
  });
  driver.run();
  ASSERT_EQ(tlm_arrivals.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(tlm_arrivals[i].core, plain_arrivals[i].core);
    EXPECT_EQ(tlm_arrivals[i].cycle, plain_arrivals[i].cycle);
    EXPECT_EQ(tlm_arrivals[i].start, plain_arrivals[i].start);
  }
  EXPECT_GT(tlm_arrivals[1].cycle, 5u + 32);  // 4096 B at 128 B per cycle, plus hops
  EXPECT_EQ(ring_data.stats(), data.stats());
  EXPECT_EQ(data.stats()["transfers"], 1);
  // the ring reached core 3's LX through core 3's NI: the multicast landing booked there
  ring_data.lx_port(3).access(100, 1, {LxRegion{0, 64}}, 100);
  EXPECT_GT(lx[3]->stats()[0]["accesses"].get<uint64_t>(), 0u);
}

TEST(ChipModule, RunsAsSimulateDoes) {
  const isa::Program p = program(2, test::kProducerConsumer, 4096);
  const arch::ArchConfig cfg = config(2);
  const SimResult expect = test::run(p, cfg);
  SimContext ctx;
  DeviceMemory image(p.dram_bytes, 0);
  ChipModule chip("spyre", p, cfg, SimOptions{}, &image);
  const SimResult r = chip.run();
  EXPECT_EQ(r.cycles, expect.cycles);
  EXPECT_EQ(r.stats, expect.stats);
}

TEST(ExternalDram, ATargetWrittenAgainstTlmHeadersTimesAsTheFifoModelAtTheSameLatency) {
  const isa::Program p = streaming();
  const arch::ArchConfig cfg = fast_fifo();
  SimOptions timing;
  timing.functional = false;
  const SimResult fifo = test::run(p, cfg, timing);

  SimContext ctx;
  ChipModule chip("spyre", p, cfg, timing, nullptr, DramBinding::External);
  FixedLatencyMemory mem("my_dram", p.dram_bytes, kFixedLatency, /*dmi=*/false);
  chip.dram_socket().bind(mem.socket);
  const SimResult r = chip.run();
  EXPECT_EQ(mem.requests, 32);  // 4 cores x (4 load + 4 store bursts)
  EXPECT_EQ(r.cycles, fifo.cycles);
  EXPECT_EQ(r.dram_read_bytes, fifo.dram_read_bytes);
  EXPECT_EQ(r.dram_write_bytes, fifo.dram_write_bytes);
  EXPECT_EQ(r.stats["chip"]["dram"]["impl"], "external");
  EXPECT_EQ(r.stats["chip"]["dram"]["read_requests"], 16);
  EXPECT_GT(r.cycles, 2 * 151u);  // a load and a store round trip at least
}

TEST(ExternalDram, TheInterconnectKeepsRequestExclusionTowardsASlowAcceptingTarget) {
  const isa::Program p = streaming();
  SimOptions timing;
  timing.functional = false;
  uint64_t cycles[2];
  for (int slow = 0; slow < 2; ++slow) {
    SimContext ctx;
    ChipModule chip("spyre", p, fast_fifo(), timing, nullptr, DramBinding::External);
    FixedLatencyMemory mem("my_dram", p.dram_bytes, kFixedLatency, /*dmi=*/false);
    if (slow) mem.accept_time = sc_core::sc_time(40, sc_core::SC_NS);  // 60 cycles per request
    chip.dram_socket().bind(mem.socket);
    cycles[slow] = chip.run().cycles;
    EXPECT_EQ(mem.requests, 32);
    EXPECT_EQ(mem.exclusion_violations, 0);
  }
  // the 32 requests pass the one request channel one after another, each holding it 60 cycles
  EXPECT_LT(cycles[0], 32 * 60u);
  EXPECT_GE(cycles[1], 32 * 60u);
}

TEST(ExternalDram, AFunctionalRunComputesInTheTargetsOwnMemoryThroughDmi) {
  const isa::Program p = program(2, test::kProducerConsumer, 4096);
  const arch::ArchConfig cfg = fast_fifo();
  DeviceMemory expect(p.dram_bytes, 0);
  const SimResult fifo = simulate(p, cfg, expect);

  SimContext ctx;
  ChipModule chip("spyre", p, cfg, SimOptions{}, nullptr, DramBinding::External);
  FixedLatencyMemory mem("my_dram", p.dram_bytes, kFixedLatency);
  chip.dram_socket().bind(mem.socket);
  const SimResult r = chip.run();
  EXPECT_EQ(r.cycles, fifo.cycles);
  EXPECT_EQ(mem.bytes(), expect);
  uint16_t h;  // -3.5 in f16 at DRAM 128
  std::memcpy(&h, mem.bytes().data() + 128, 2);
  EXPECT_EQ(h, 0xC300);
}

TEST(ExternalDram, AFunctionalRunRefusesATargetWithoutDmi) {
  const isa::Program p = program(2, test::kProducerConsumer, 4096);
  const int before = sc_core::sc_report_handler::get_count("spyre/mem/dmi");
  SimContext ctx;
  ChipModule chip("spyre", p, fast_fifo(), SimOptions{}, nullptr, DramBinding::External);
  FixedLatencyMemory mem("my_dram", p.dram_bytes, kFixedLatency, /*dmi=*/false);
  chip.dram_socket().bind(mem.socket);
  try {
    chip.run();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs read-write DMI"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sc_core::sc_report_handler::get_count("spyre/mem/dmi"), before + 1);
}

TEST(Reports, AModelErrorIsAnScReportAUserCanCountAndStillAnError) {
  const isa::Program p = program(1, ".core 0\n  dma.load dram=0 lx=0 bytes=8192\n  halt\n", 4096);
  const int before = sc_core::sc_report_handler::get_count("spyre/core/instr");
  EXPECT_THROW(test::run(p, config(1)), Error);
  EXPECT_EQ(sc_core::sc_report_handler::get_count("spyre/core/instr"), before + 1);
}

TEST(SimContexts, ManyDifferentChipsInOneProcessGiveTheirOwnCyclesEachTime) {
  const isa::Program p = program(2, test::kProducerConsumer, 4096);
  arch::ArchConfig lp = config(2);
  lp.dram_impl = "lpddr5";
  std::vector<uint64_t> first;
  for (int round = 0; round < 2; ++round) {
    std::vector<uint64_t> cycles;
    for (const arch::ArchConfig& cfg : {config(2), lp, config(8), fast_fifo()})
      cycles.push_back(test::run(p, cfg).cycles);
    if (round == 0) first = cycles;
    EXPECT_EQ(cycles, first);
  }
  EXPECT_NE(first[0], first[1]);  // fifo and lpddr5 differ
}

}  // namespace
}  // namespace spyre::sim
