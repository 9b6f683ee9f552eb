// The chip's module tree and one run on the kernel (chip_module.h).
#include "spyre/sim/chip_module.h"

#include <algorithm>
#include <system_error>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

#include "spyre/error.h"
#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {
// The CPUs this process may run on: its affinity mask, which a container's cpuset narrows
// (hardware_concurrency counts the machine's).
unsigned usable_cpus() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
#endif
  return std::thread::hardware_concurrency();
}

// What a chip needs of its inputs before anything is built (simulate() and a user's own tree).
const arch::ArchConfig& checked(const arch::ArchConfig& cfg, const isa::Program& program) {
  cfg.validate();
  isa::validate(program);
  if (static_cast<int64_t>(program.num_cores) > cfg.cores)
    throw Error("simulate", "program needs " + std::to_string(program.num_cores) +
                                " cores, arch has " + std::to_string(cfg.cores));
  return cfg;
}

std::vector<std::unique_ptr<CoreModule>> make_cores(EventDriver& driver, int64_t n) {
  std::vector<std::unique_ptr<CoreModule>> cores;
  for (int c = 0; c < n; ++c)
    cores.push_back(std::make_unique<CoreModule>(
        sc_core::sc_module_name(("core_" + std::to_string(c)).c_str()), driver, c));
  return cores;
}
}  // namespace

CoreModule::CoreModule(const sc_core::sc_module_name& name, EventDriver& driver, int id)
    : sc_core::sc_module(name),
      dma_in("dma_in", driver, id, false),
      dma_out("dma_out", driver, id, true),
      lx("lx"),
      ni("ni"),
      lx_socket("lx_socket"),
      units_lx(this->name(), [this] { return lx_socket.operator->(); }),
      id_(id) {}

ChipModule::ChipModule(const sc_core::sc_module_name& name, const isa::Program& program,
                       const arch::ArchConfig& cfg, const SimOptions& opts, DeviceMemory* image,
                       DramBinding binding)
    : sc_core::sc_module(name),
      cfg_(checked(cfg, program)),
      layout_(cfg_, program),
      opts_(opts),
      env_{cfg_,
           program,
           q_,
           opts.functional,
           opts.trace_detail == traces::TraceDetail::Full ? opts.trace : nullptr,
           opts.trace,
           std::string(this->name()),
           &opts_.host_call},
      driver_("sched", q_, TimeBase(cfg_.clock_ghz), opts.max_cycles),
      mem_("mem", program.dram_bytes, cfg_),
      dram_(binding == DramBinding::BuiltIn
                ? std::make_unique<DramTarget>("dram", env_, driver_,
                                               opts.functional ? image : nullptr)
                : nullptr),
      cores_(make_cores(driver_, cfg_.cores)),
      chip_(env_, ChipPorts{[this](int c, bool write) -> MemPort& {
                              CoreModule& m = *cores_[static_cast<size_t>(c)];
                              return write ? static_cast<MemPort&>(m.dma_out) : m.dma_in;
                            },
                            [this](int c, LxUser user) -> LxPort& {
                              CoreModule& m = *cores_[static_cast<size_t>(c)];
                              switch (user) {
                                case LxUser::Units: return m.units_lx;
                                case LxUser::DmaIn: return m.dma_in.lx;
                                case LxUser::DmaOut: return m.dma_out.lx;
                                case LxUser::RingData: return ring_data_.lx_port(c);
                                default: return ring_reduce_.lx_port(c);
                              }
                            },
                            [this](int c, bool reduce) -> RingPort& {
                              return cores_[static_cast<size_t>(c)]->ni.port(reduce);
                            }}),
      ring_data_("ring_data", chip_.ring(), cfg_.cores),
      ring_reduce_("ring_reduce", chip_.reduce_ring(), cfg_.cores),
      barrier_("barrier") {
  env_.layout = &layout_;
  for (auto& m : cores_) {
    m->attach(chip_.core(m->id()));
    m->dma_in.socket.bind(mem_.dma_socket);
    m->dma_out.socket.bind(mem_.dma_socket);
    m->lx_socket.bind(m->lx.socket);
    m->dma_in.lx_socket.bind(m->lx.socket);
    m->dma_out.lx_socket.bind(m->lx.socket);
    m->ni.lx_socket.bind(m->lx.socket);
    ring_data_.ni_out.bind(m->ni.ring_in);
    ring_reduce_.ni_out.bind(m->ni.ring_in);
    m->ni.data_socket.bind(ring_data_.ni_socket);
    m->ni.reduce_socket.bind(ring_reduce_.ni_socket);
  }
  if (dram_) mem_.dram_socket.bind(dram_->socket);
  if (dram_ && opts.functional && image && image->size() < program.dram_bytes)
    image->resize(program.dram_bytes, 0);
  using DT = SimOptions::DataThread;
  if (opts.functional &&
      (opts.data_thread == DT::On || (opts.data_thread == DT::Auto && usable_cpus() > 1))) {
    try {
      data_ = std::make_unique<DataWorker>(&Core::run_effect);
      env_.data = data_.get();
    } catch (const std::system_error& e) {  // no thread to be had: inline, unless asked for
      if (opts.data_thread == DT::On)
        SPYRE_FAIL("spyre/chip/data_thread", "simulate",
                   std::string("data_thread on: cannot start the thread: ") + e.what());
    }
  }
  q_.at(0, [this] { start(); });
}

ChipModule::~ChipModule() = default;

void ChipModule::start() {
  const isa::Program& p = env_.program;
  if (opts_.functional && p.dram_bytes > 0) {
    uint8_t* dram = mem_.dmi_whole();
    chip_.set_dram_data(dram);
    for (const auto& seg : p.data)
      std::copy(seg.bytes.begin(), seg.bytes.end(), dram + seg.dram_addr);
  }
  chip_.start();
}

SimResult ChipModule::run() {
  KernelStop stop{};
  try {
    stop = driver_.run();
  } catch (...) {
    // Every effect submitted came before whatever stopped the timing model: one that failed
    // is the run's first error (drain rethrows it).
    env_.settle_data();
    throw;
  }
  env_.settle_data();  // the results; rethrows an effect's error
  if (stop == KernelStop::Watchdog)
    SPYRE_FAIL("spyre/chip/watchdog", "simulate",
               "watchdog: no end after max_cycles " + std::to_string(opts_.max_cycles) +
                   " (at cycle " + std::to_string(q_.now()) + ")" + chip_.stuck_report());
  if (!chip_.all_halted())
    SPYRE_FAIL("spyre/chip/deadlock", "simulate",
               "deadlock at cycle " + std::to_string(q_.now()) +
                   ": nothing left to happen, but cores have not halted" + chip_.stuck_report());
  if (env_.activity && dram_) dram_->model().finish_trace();
  chip_.finish_trace();
  SimResult r;
  r.cycles = chip_.end_cycle();
  r.kernels = chip_.kernel_stats();
  r.dram_read_bytes = mem_.read_bytes();
  r.dram_write_bytes = mem_.write_bytes();
  r.stats = chip_.stats(r.cycles, dram_ ? dram_->model().stats() : mem_.stats());
  r.stats["chip"]["mem_ports"] = mem_.port_stats();
  r.sim_events = q_.events_run();
  r.sim_activations = driver_.activations();
  return r;
}

}  // namespace spyre::sim
