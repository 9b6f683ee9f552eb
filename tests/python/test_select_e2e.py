"""topk and median (Inductor fallbacks, lowered on the SFP by compiler/lower/select.cpp) against
eager PyTorch: captured by torch.compile, compiled, simulated on "tiny", and compared exactly.

Values (NaN with NaN, +-inf) and indices must equal eager's. Where a row has equal values at the
selection boundary torch leaves the index unspecified (its CPU kernel's nth_element decides, see
compiler/README.md): those cases compare values exactly and check that every index points at
its value, with the device's rule (ascending index) asserted against the sorted reference.
"""

import pytest
import torch

import spyre_sim

NAN, INF = float("nan"), float("inf")


def _distinct(*shape, dtype=torch.float16, seed=0):
    """Values with no ties: a random permutation of a grid exactly representable in fp16."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    grid = (torch.randperm(n, generator=g) - n // 2).to(torch.float32) / 8
    return grid.to(dtype).reshape(shape)


def _run(fn, x):
    r = spyre_sim.run(fn, (x,), arch="tiny")
    want = fn(x)
    got = r.outputs
    if isinstance(want, torch.Tensor):
        want, got = (want,), (got,)
    assert len(got) == len(want)
    return list(got), list(want)


def _exact(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("k,dim,largest",
                         [(4, -1, True), (5, 0, False), (1, 1, True), (64, -1, False)])
def test_topk_matches_eager_exactly(k, dim, largest):
    x = _distinct(16, 64)
    x[3, 10] = NAN  # NaN: first when largest, last when smallest (torch)
    x[5, 0], x[5, 63] = INF, -INF
    x[7, :] = x[7, :].abs().neg() - 1  # a row of negatives only
    got, want = _run(lambda t: torch.topk(t, k, dim, largest=largest), x)
    _exact(got, want)


def test_topk_bf16_and_fp32():
    for dtype in (torch.bfloat16, torch.float32):
        x = _distinct(8, 40, dtype=dtype, seed=3)
        got, want = _run(lambda t: torch.topk(t, 6, -1), x)
        _exact(got, want)


@pytest.mark.parametrize("n", [63, 64])
def test_median_matches_eager_exactly(n):
    x = _distinct(16, n, seed=1)
    x[2, 7] = NAN  # NaN row: NaN at the first NaN
    x[2, 9] = NAN
    x[4, :5] = -INF
    got, want = _run(lambda t: torch.median(t, -1), x)  # values and indices
    _exact(got, want)


def test_median_keepdim_along_dim0():
    x = _distinct(10, 24, dtype=torch.bfloat16, seed=2)
    got, want = _run(lambda t: torch.median(t, 0, keepdim=True), x)
    _exact(got, want)


def test_ties_give_eagers_values_and_the_first_index():
    x = torch.randint(-3, 4, (16, 64)).to(torch.float16)  # many ties
    got, want = _run(lambda t: torch.topk(t, 5, -1), x)
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
    assert torch.equal(x.gather(1, got[1]), got[0])  # each index holds its value
    # The device's rule: equal values by ascending index (a stable descending sort).
    ref = torch.sort(x.float(), dim=-1, descending=True, stable=True)
    assert torch.equal(got[1], ref.indices[:, :5])
    got, want = _run(lambda t: torch.median(t, -1), x)
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
    assert torch.equal(x.gather(1, got[1].unsqueeze(1)).squeeze(1), got[0])


def test_stable_sort_kthvalue_and_median_of_all_match_eager_exactly():
    x = torch.randint(-3, 4, (16, 32)).to(torch.float16)  # ties: a stable sort fixes the order
    x[2, 5] = NAN
    for descending in (False, True):
        got, want = _run(lambda t: torch.sort(t, dim=-1, descending=descending, stable=True), x)
        _exact(got, want)
    x = _distinct(12, 40, dtype=torch.float32, seed=4)
    x[3, 6] = NAN  # kthvalue: NaN is the largest
    got, want = _run(lambda t: torch.kthvalue(t, 5, 0), x)
    _exact(got, want)
    got, want = _run(lambda t: torch.median(t), _distinct(9, 15, seed=5))
    _exact(got, want)


@pytest.mark.parametrize("name,fn,copies", [
    ("topk_dim1", lambda t: torch.topk(t, 3, dim=1), 3),
    ("topk_dim1_smallest", lambda t: torch.topk(t, 2, dim=1, largest=False), 3),
    ("sort_dim1", lambda t: torch.sort(t, dim=1, descending=True), 3),
    ("kthvalue_dim2_of_4d", lambda t: torch.kthvalue(t.reshape(2, 3, 6, 5), 4, dim=2), 1),
    ("kthvalue_keepdim", lambda t: torch.kthvalue(t, 2, dim=1, keepdim=True), 3),
    ("topk_dim0", lambda t: torch.topk(t, 2, dim=0), 0),
])
def test_a_dim_that_does_not_walk_as_rows_goes_through_copies(name, fn, copies):
    """[A, N, B] along N: the input is copied with N last and the outputs that keep the dim come
    back through copies (compiler/divide/select_copy.cpp); dim 0 walks as it is."""
    x = _distinct(6, 6, 5, seed=4)
    x[1, 2, 3] = NAN
    r = spyre_sim.run(fn, (x,), arch="tiny", cache=False)
    _exact(list(r.outputs), list(fn(x)))
    listed = [c for rep in r.reports for c in rep.get("operand_copies", [])]
    assert len(listed) == copies, listed
