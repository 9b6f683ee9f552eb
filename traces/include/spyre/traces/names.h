#pragma once
// The names of a trace's process groups are the chip's SystemC module paths (sim/README.md):
//   "spyre"              tracks barrier, kernels; counter lx planned bytes
//   "spyre.core_3"       tracks seq, dma_in, dma_out, pt0, pt1, sfp0, sfp1, ring;
//                        counters "dma_in busy", "pt0 busy", ... (busy fraction per window)
//   "spyre.dram"         tracks ch0, ch1, ... (lpddr5) or fifo; counters "ch0 GB/s", ...
//   "spyre.ring_data", "spyre.ring_reduce"   tracks "link a->b"; counters per link
// so "spyre.core_3" / "dma_in" is the module spyre.core_3.dma_in, and the stats carry the
// same paths ("module" keys). The chip is "spyre" unless a user names their own ChipModule.
#include <string>
#include <string_view>

namespace spyre::traces {

inline constexpr char kChipModule[] = "spyre";
// A unit's busy-fraction counter in its core's group is "<track> busy" ("pt0 busy").
inline constexpr char kBusySuffix[] = " busy";

enum class GroupKind { Chip, Core, Dram, Ring, Other };

std::string core_module(std::string_view chip, int core);  // "<chip>.core_<core>"
// The core of "<chip>.core_N", else -1.
int core_of_group(std::string_view group);
// Core, Dram ("<chip>.dram"), Ring ("<chip>.ring_data", "<chip>.ring_reduce"), Chip (a name
// without a dot: the chip itself), Other.
GroupKind group_kind(std::string_view group);

}  // namespace spyre::traces
