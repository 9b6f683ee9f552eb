"""Memory-bound kernels against the DRAM bound of the chip (tools/bench/membound): the bound
itself, and the reductions split across cores (split_reduction.h) and with their row values
stored once per core reaching 90 % of it."""

import importlib.util
import pathlib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "bench_membound", ROOT / "tools" / "bench" / "membound" / "bench_membound.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _case(kernel, mib):
    (c,) = bench.cases({kernel}, {mib})
    return bench.measure(c[2], "spyre", [])


def test_the_bound_is_the_dram_models_v_curve_at_the_mix():
    from spyre_sim._core import core

    read = core.dram_bound("spyre", [], 1 << 26, 0)
    balanced = core.dram_bound("spyre", [], 1 << 26, 1 << 26)
    # tools/bench/dram/README.md: streaming reads 150.2 GB/s, balanced 108.2 GB/s.
    assert read["read_fraction"] == 1.0 and 145 < read["gbps"] < 155
    assert balanced["read_fraction"] == 0.5 and 100 < balanced["gbps"] < 112
    clock_ghz = yaml.safe_load(core.arch_yaml("spyre", []))["chip.clock_ghz"]
    assert balanced["cycles"] == pytest.approx((2 << 26) / balanced["gbps"] * clock_ghz,
                                               rel=1e-6)
    fifo = core.dram_bound("spyre", ["dram.impl=fifo"], 1 << 26, 1 << 26)
    assert fifo["gbps"] == pytest.approx(150, rel=0.02)  # no read/write interaction


@pytest.mark.parametrize("kernel", ["sum", "row_sum"])
@pytest.mark.parametrize("mib", [1, 4, 16, 64, 256])
def test_reductions_reach_90_percent_of_the_dram_bound(kernel, mib):
    r = _case(kernel, mib)
    assert r["of_bound"] >= 0.90, r
    if kernel == "sum":
        assert r["kernels"] == 2  # partial and final reduction


@pytest.mark.parametrize("kernel", ["neg", "pointwise_chain", "softmax", "layer_norm",
                                    "rms_norm"])
def test_streaming_kernels_stay_near_the_bound(kernel):
    r = _case(kernel, 16)
    assert r["of_bound"] >= 0.90, r
    # The input read once and the output written once: no re-reads, no spills (each core reads
    # the norms' weight and bias itself: 32 x 16 KiB on 16 MiB).
    assert r["dram_read"] <= r["in_bytes"] * 1.04 and r["dram_write"] <= r["out_bytes"] * 1.01
