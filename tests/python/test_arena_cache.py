"""The frame-stack chunk cache the C++ core installs on import (tools/python/arena_cache.h):
a call chain that crosses a 16 KiB chunk boundary over and over reuses the freed chunk instead
of asking the system for a new one each time, and Python's results are unchanged."""

import os

from spyre_sim._core import core


def _depth(n: int) -> int:
    return 0 if n == 0 else _depth(n - 1) + 1


def test_a_deep_call_chain_reuses_its_frame_stack_chunks():
    assert os.environ.get("SPYRE_SIM_ARENA_CACHE") != "off", (
        "SPYRE_SIM_ARENA_CACHE=off is set: the cache this test checks is not installed")
    before = core._arena_cache_stats()
    for _ in range(200):
        assert _depth(600) == 600  # deep enough to need a second 16 KiB chunk each time
    after = core._arena_cache_stats()
    reused = after["reused"] - before["reused"]
    fresh = after["fresh"] - before["fresh"]
    assert reused >= 190, (before, after)
    assert fresh <= 10, (before, after)
