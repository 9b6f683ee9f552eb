// Model errors through sc_report (report.h).
#include "spyre/sim/report.h"

#include <systemc>

#include "spyre/error.h"

namespace spyre::sim {

void fail(const char* msg_type, const std::string& where, const std::string& what, const char* file,
          int line) {
  const std::string msg = where.empty() ? what : where + ": " + what;
  try {
    sc_core::sc_report_handler::report(sc_core::SC_ERROR, msg_type, msg.c_str(), file, line);
  } catch (const sc_core::sc_report&) {
    // the default action (SC_THROW); the run stops with the project's error type below
  }
  throw Error(where, what);
}

}  // namespace spyre::sim
