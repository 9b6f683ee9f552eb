#pragma once
// Where a result came from: every output folder (run, sweep, regress) holds a provenance.json
// made here, so that one format serves the C++ CLI and the Python tools alike.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spyre::runner {

struct BuildInfo {
  std::string version;  // the project version (CMake's project(VERSION))
  std::string commit;   // git commit of the source tree at build time, "unknown" outside git
  bool dirty = false;   // tracked files differed from that commit at build time
};
BuildInfo build_info();
// "spyre-sim 0.1.0 (commit 3ef9fb9a..., modified)": what `spyre-sim --version` prints.
std::string version_line();

// {command: [argv...], spyre_sim: {version, commit, dirty}, torch: {version, source}, arch,
// sets, effective_config, created_utc}. `torch_version` empty: null; `torch_source` says
// where it was read ("installed": the torch in the environment, "ir": the IR's capture).
// `effective_config` names the file of the folder that holds the configuration.
nlohmann::json provenance(const std::vector<std::string>& command, const std::string& torch_version,
                          const std::string& torch_source, const std::string& arch,
                          const std::vector<std::string>& sets,
                          const std::string& effective_config = "arch.yaml");

}  // namespace spyre::runner
