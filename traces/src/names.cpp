// Trace group names (names.h).
#include "spyre/traces/names.h"

namespace spyre::traces {

namespace {
bool ends(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}
}  // namespace

std::string core_module(std::string_view chip, int core) {
  return std::string(chip) + ".core_" + std::to_string(core);
}

int core_of_group(std::string_view group) {
  const size_t at = group.rfind(".core_");
  if (at == std::string_view::npos || at + 6 >= group.size()) return -1;
  int c = 0;
  for (char ch : group.substr(at + 6)) {
    if (ch < '0' || ch > '9' || c > (1 << 24)) return -1;
    c = c * 10 + (ch - '0');
  }
  return c;
}

GroupKind group_kind(std::string_view group) {
  if (core_of_group(group) >= 0) return GroupKind::Core;
  if (ends(group, ".dram")) return GroupKind::Dram;
  if (ends(group, ".ring_data") || ends(group, ".ring_reduce")) return GroupKind::Ring;
  if (!group.empty() && group.find('.') == std::string_view::npos) return GroupKind::Chip;
  return GroupKind::Other;
}

}  // namespace spyre::traces
