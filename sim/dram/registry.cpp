// DRAM models by name. A new model is a new file plus one line here.
#include <utility>
#include <vector>

#include "dram_impls.h"
#include "spyre/error.h"
#include "spyre/sim/report.h"

namespace spyre::sim {
namespace {

using Factory = std::unique_ptr<DramModel> (*)(Env&);

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"fifo", make_fifo_dram},
      {"lpddr5", make_lpddr5_dram},
  };
  return r;
}

}  // namespace

std::vector<std::string> dram_impl_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<DramModel> make_dram(const std::string& impl, Env& env) {
  for (const auto& [name, make] : registry())
    if (name == impl) return make(env);
  std::string known;
  for (const std::string& n : dram_impl_names()) known += (known.empty() ? "" : ", ") + n;
  SPYRE_FAIL("spyre/dram/config", "dram.impl",
             "unknown DRAM model '" + impl + "' (known: " + known + ")");
}

}  // namespace spyre::sim
