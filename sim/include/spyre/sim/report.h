#pragma once
// Errors of the model go through sc_report, so a SystemC user can count, log, display or
// escalate them with sc_report_handler by message id. Ids are "spyre/<block>/<what>":
//   spyre/kernel/causality  an event scheduled for a cycle that has passed
//   spyre/core/instr        an instruction that cannot run (operand, range, token)
//   spyre/chip/deadlock     nothing left to happen, but cores have not halted
//   spyre/chip/watchdog     no end after max_cycles
//   spyre/mem/...           the memory interconnect (protocol, address, no DMI, TLM error)
//   spyre/lx/..., spyre/ring/...   an LX booking or ring transfer the TLM path refused
//   spyre/dram/config, spyre/ring/config, spyre/lx/config   invalid parameters of a block
// The report is raised with severity SC_ERROR; whatever actions the handler takes (the
// default throws the sc_report), fail() then throws spyre::Error(where, what), which the CLI
// prints as one message with exit status 2. An error cannot be demoted into continuing.
#include <string>

namespace spyre::sim {

[[noreturn]] void fail(const char* msg_type, const std::string& where, const std::string& what,
                       const char* file, int line);

}  // namespace spyre::sim

#define SPYRE_FAIL(msg_type, where, what) \
  ::spyre::sim::fail((msg_type), (where), (what), __FILE__, __LINE__)
