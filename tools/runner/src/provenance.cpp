#include "spyre/runner/provenance.h"

#include <chrono>
#include <ctime>

#include "spyre/build_info.h"  // generated at build time (tools/version/build_info.cmake)

namespace spyre::runner {

BuildInfo build_info() { return {SPYRE_SIM_VERSION, SPYRE_SIM_GIT_COMMIT, SPYRE_SIM_GIT_DIRTY}; }

std::string version_line() {
  BuildInfo b = build_info();
  return "spyre-sim " + b.version + " (commit " + b.commit + (b.dirty ? ", modified" : "") + ")";
}

namespace {
std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

nlohmann::json provenance(const std::vector<std::string>& command, const std::string& torch_version,
                          const std::string& torch_source, const std::string& arch,
                          const std::vector<std::string>& sets,
                          const std::string& effective_config) {
  BuildInfo b = build_info();
  nlohmann::json torch = nullptr;
  if (!torch_version.empty()) torch = {{"version", torch_version}, {"source", torch_source}};
  return {{"command", command},
          {"spyre_sim", {{"version", b.version}, {"commit", b.commit}, {"dirty", b.dirty}}},
          {"torch", torch},
          {"arch", arch},
          {"sets", sets},
          {"effective_config", effective_config},
          {"created_utc", utc_now()}};
}

}  // namespace spyre::runner
