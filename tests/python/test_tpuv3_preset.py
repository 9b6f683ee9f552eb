"""The "tpuv3" preset (isa/arch/tpuv3.yaml): one TPUv3 TensorCore with two 128 x 128
weight-stationary arrays at 940 MHz. A GEMM runs on it, matches eager, and takes the cycles its
arrays and memory allow: no faster than the arrays' peak, slower than a Spyre core's."""

import torch

import spyre_sim


def test_a_gemm_on_tpuv3_matches_eager_and_respects_the_array_peak():
    torch.manual_seed(0)
    n = 512
    a, b = (torch.rand(n, n, dtype=torch.float16) for _ in range(2))
    r = spyre_sim.run(torch.mm, (a, b), arch="tpuv3")
    assert r.outputs_match is True, str(r)
    assert r.summary["arch"] == "tpuv3" and r.summary["cores"] == 1
    assert r.summary["clock_ghz"] == 0.94
    peak = 2 * 128 * 128  # MACs per cycle: two 128 x 128 arrays
    assert r.cycles >= n ** 3 / peak
    # PyTorchSim's measured TPUv3 cycles for this GEMM: 9,490 (../shared/calibration/
    # tpuv3_measured.csv). The preset is 28 % fast: its K steps chain on the arrays (no
    # preload or drain of their own, sim/README.md), where the measured GEMMs take about their
    # compute plus their memory time (tools/bench/fidelity/README.md). A bound that catches a
    # drift, not the fidelity target.
    assert abs(r.cycles - 9490) / 9490 < 0.30, r.cycles


def test_a_channels_last_convolution_on_tpuv3_matches_eager_with_halo_wide_rows():
    # Weight-stationary arrays: the corelets cut a tile's rows anywhere (arch::pt_m_rows), the
    # taps chain on each array, and a 3x3 stride-1 convolution takes halo-wide rows.
    torch.manual_seed(0)
    last = torch.channels_last
    x = torch.rand(2, 32, 12, 12, dtype=torch.float16).to(memory_format=last)
    w = (torch.rand(48, 32, 3, 3, dtype=torch.float16) * 0.1).to(memory_format=last)
    r = spyre_sim.run(lambda a, b: torch.nn.functional.conv2d(a, b, padding=1), (x, w),
                      arch="tpuv3")
    assert r.outputs_match is True, str(r)
    tiles = [k["tiles"] for rep in r.reports for k in rep["kernels"] if k.get("unit") == "pt"]
    assert tiles and tiles[0]["halo"] and tiles[0]["wide"], tiles
