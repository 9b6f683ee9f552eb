"""Trace process groups are the chip's SystemC module paths (traces/include/spyre/traces/names.h):
"spyre" (barrier, kernels), "spyre.core_3" (seq, dma_in, pt0, ...; counters "pt0 busy", ...),
"spyre.dram" (ch0, ..., or fifo), "spyre.ring_data" and "spyre.ring_reduce" (links)."""
import re

CHIP = "spyre"
KERNELS = (CHIP, "kernels")
BARRIER = (CHIP, "barrier")

BUSY_SUFFIX = " busy"  # a unit's busy-fraction counter in its core's group: "pt0 busy"

_CORE = re.compile(r"\.core_(\d+)$")


def core_of(group):
    """The core of "<chip>.core_N", else None."""
    m = _CORE.search(group)
    return int(m.group(1)) if m else None


def is_core(group):
    return core_of(group) is not None


def is_dram(group):
    return group.endswith(".dram")


def is_ring(group):
    return group.endswith((".ring_data", ".ring_reduce"))


def is_chip(group):
    return bool(group) and "." not in group
