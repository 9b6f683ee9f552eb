#pragma once
// The program cache: compile results (program, tensor bindings, compile report) stored on disk
// under a key of everything a compile depends on, so that running the same graph again on the
// same configuration skips the compiler. The key is a SHA-1 over
//   - the build: a hash of the binary this code is linked into (the CLI, the Python module), so
//     any change of the compiler, however small and committed or not, misses;
//   - the effective chip configuration (arch YAML after every --set) and the `compiler.*`
//     settings as given (the options they parse to, defaults included, are a function of
//     these and the build);
//   - the IR, serialised canonically (sorted keys).
// The report's `file` is not part of the key (it names where this run's IR came from) and is
// replaced on a hit. Entries are MessagePack files (programs/KEY.entry) written atomically; an
// unreadable or truncated entry is a miss and is rewritten. The folder is kept under a size cap by
// removing the least recently used entries (a hit refreshes an entry's time).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"

namespace spyre::runner {

struct ProgramCache {
  std::string dir;                  // empty: no cache
  uint64_t max_bytes = 2ull << 30;  // 2 GiB; SPYRE_SIM_CACHE_MAX_MB
  bool enabled() const { return !dir.empty(); }

  // SPYRE_SIM_CACHE: the folder, or "off" (also "0", "") for none; unset: the user's cache
  // folder, $XDG_CACHE_HOME/spyre-sim or ~/.cache/spyre-sim (none when neither is set).
  static ProgramCache from_env();

  std::optional<compiler::CompileResult> load(const std::string& key) const;
  // Failures to write (read-only folder, full disk) are not errors: the run goes on uncached.
  void store(const std::string& key, const compiler::CompileResult& r) const;
  std::string path_of(const std::string& key) const;

  // Raw entries of one kind (a subfolder: "programs" above; "ir", the captured graphs the Python
  // front end keys itself, spyre_capture/ir_cache.py), under the same size cap and LRU order.
  std::optional<std::vector<uint8_t>> load_entry(const std::string& kind,
                                                 const std::string& key) const;
  void store_entry(const std::string& kind, const std::string& key,
                   const std::vector<uint8_t>& bytes) const;
  std::string entry_path(const std::string& kind, const std::string& key) const;
};

// Hex SHA-1 of this binary's own image (the file the running code was loaded from); computed
// once per process.
const std::string& build_id();

// The cache key of compiling `ir_text` (canonical JSON) for `cfg` with `compiler_sets` (the
// `compiler.*` --set strings, in order) by the build `build`: hex SHA-1.
std::string program_key(const std::string& build, const arch::ArchConfig& cfg,
                        const std::vector<std::string>& compiler_sets, const std::string& ir_text);

}  // namespace spyre::runner
