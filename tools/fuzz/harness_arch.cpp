// Fuzz harness: a chip configuration file (YAML). Accepted text must validate or be refused
// by validate(); a valid configuration must survive its own YAML (to_yaml) unchanged, so the
// effective configuration written beside every result reloads to the same chip.
#include <cmath>

#include "harness.h"
#include "spyre/arch/arch.h"
#include "spyre/error.h"

namespace spyre::fuzz {

bool arch_yaml(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  arch::ArchConfig c;
  try {
    c = arch::parse_arch_yaml(text, "fuzz.yaml");
    c.validate();
  } catch (const Error&) {
    return false;
  }
  for (const auto& p : arch::param_table())
    if (p.type != "string" && !std::isfinite(std::stod(c.get_text(p.key))))
      fail("validated configuration has a non-finite " + p.key);
  const std::string yaml = c.to_yaml();
  arch::ArchConfig again;
  try {
    again = arch::parse_arch_yaml(yaml, "effective.yaml");
    again.validate();
  } catch (const Error& e) {
    fail(std::string("the effective configuration does not reload: ") + e.what() + "\n" + yaml);
  }
  if (again.to_yaml() != yaml) fail("the effective configuration reloads differently:\n" + yaml);
  return true;
}

}  // namespace spyre::fuzz
