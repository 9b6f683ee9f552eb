"""Convolution tiles of several whole images (compiler/lower/conv.cpp, `tiles.tb`): a batch of
small feature maps, with a fused BatchNorm + ReLU epilogue and a last tile of fewer images,
matches eager PyTorch."""

import torch

import spyre_sim


def test_tiles_of_whole_images_with_a_fused_epilogue_match_eager():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(32, 48, 3, padding=1), torch.nn.BatchNorm2d(48),
                            torch.nn.ReLU()).eval().half()
    with torch.no_grad():
        m[1].running_mean.uniform_(-1, 1)
        m[1].running_var.uniform_(0.5, 2)
    x = torch.randn(11, 32, 5, 5, dtype=torch.float16).to(memory_format=torch.channels_last)
    # One core and the taps path, so that the search takes tiles of several images.
    r = spyre_sim.run(m, (x,), set=["compiler.cores=1", "compiler.debug.conv_halo=taps"])
    assert r.outputs_match is True, str(r)
    (conv,) = [k for k in r.reports[0]["kernels"] if "tiles" in k and "tb" in k["tiles"]]
    assert conv["tiles"]["tb"] > 1 and 11 % conv["tiles"]["tb"] != 0, conv["tiles"]
    assert conv["epilogue"]["output_stored"] is False, conv["epilogue"]
