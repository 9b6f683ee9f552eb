"""Blocked transposes (compiler/lower/transpose.cpp) against eager PyTorch on shapes whose tiles
do not divide evenly and whose tile count is not a multiple of the cores: the skewed, cyclic
tile walk covers every element once."""

import pytest
import torch

import spyre_sim


@pytest.mark.parametrize("shape", [(300, 700), (1024, 96), (64, 2048), (3, 130, 520)])
def test_transpose_matches_eager(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float16)
    r = spyre_sim.run(lambda t: t.transpose(-2, -1).contiguous(), (x,),
                      set=["compiler.layout_copy=transpose"])
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    assert rep["kernels"][0]["layout_copy"]["lowering"] == "blocked transpose"
