"""The device decompositions (compiler/frontend/spyre_capture/decomp.py) and the lowerings they
lean on, end to end on the "tiny" chip against eager fp32: scans, accumulating and masked
scatters, searches, 1-D and transposed convolutions (a one-channel input gives a planar
output), nested masked loads (a transposed convolution's zero insertion under its padding) and
max pooling's indices computed from loaded values."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import spyre_sim


def _run(fn, *inputs):
    result = spyre_sim.run(fn, inputs, arch="tiny", cache=False)
    assert result.outputs_match is True, f"max abs error {result.summary.get('max_abs_err')}"
    assert result.cycles > 0
    return result


def _h(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.float16)


@pytest.mark.parametrize("fn", [
    lambda x: torch.cummax(x, 1).values,
    lambda x: torch.cummin(x, 0).indices,
    lambda x: torch.cumprod(x, 1),
    lambda x: torch.logcumsumexp(x, 1),
], ids=["cummax", "cummin_indices", "cumprod", "logcumsumexp"])
def test_scans(fn):
    _run(fn, _h(4, 7))


def test_scatter_reduce_amax_without_self_and_index_add():
    x, src = _h(4, 6), _h(4, 3, seed=1)
    index = torch.tensor([[0, 2, 2], [5, 5, 1], [0, 1, 2], [3, 3, 3]])
    _run(lambda a, i, s: a.scatter_reduce(1, i, s, "amax", include_self=False), x, index, src)
    _run(lambda a, i, s: a.index_add(0, i, s, alpha=2), _h(5, 3), torch.tensor([4, 0, 4]),
         _h(3, 3, seed=2))


def test_index_put_with_a_boolean_mask_and_put_without_accumulate():
    mask = torch.tensor([True, False, True, False, True])
    _run(lambda a, m, v: torch.index_put(a, (m,), v), _h(5, 3), mask, _h(3, 3, seed=1))
    _run(lambda a, m, v: torch.index_put(a, (m,), v, accumulate=True), _h(5, 3), mask,
         _h(3, 3, seed=1))
    _run(lambda a, i, v: torch.put(a, i, v), _h(3, 4), torch.tensor([11, -1, 0, 5]),
         _h(4, seed=1))


def test_searchsorted_both_sides():
    seq = torch.tensor([[-1.0, 0.0, 0.5, 2.0], [0.0, 1.0, 1.0, 3.0]], dtype=torch.float16)
    vals = torch.tensor([[0.0, 2.5, -3.0], [1.0, 0.5, 3.0]], dtype=torch.float16)
    _run(lambda s, v: torch.searchsorted(s, v), seq, vals)
    _run(lambda s, v: torch.searchsorted(s, v, right=True), seq, vals)


def test_conv1d_and_a_one_channel_conv2d_with_a_planar_output():
    _run(lambda x, w, b: F.conv1d(x, w, b, stride=3, padding=1, groups=2, dilation=2),
         _h(2, 4, 8), _h(2, 2, 3, seed=1), _h(2, seed=2))
    _run(lambda x, w: F.conv2d(x, w, padding=1), _h(1, 1, 6, 5), _h(3, 1, 3, 3, seed=1))


def test_transposed_convolutions_with_dilation_and_output_padding():
    _run(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1,
                                            dilation=2), _h(1, 1, 4), _h(1, 1, 4, seed=1),
         _h(1, seed=2))
    _run(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=2),
         _h(1, 4, 3, 4), _h(4, 3, 3, 2, seed=1))


def test_3d_convolutions_as_2d_ones():
    """conv3d: the depth taps stacked as channels (stride, padding, dilation and groups along
    depth and in the plane); conv_transpose3d through a direct 3-D one."""
    _run(lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 1, 0),
                                  dilation=(2, 1, 1)),
         _h(2, 4, 7, 6, 5), _h(6, 4, 3, 3, 2, seed=1), _h(6, seed=2))
    _run(lambda x, w: F.conv3d(x, w, groups=2, stride=(1, 2, 1)), _h(1, 4, 5, 5, 5),
         _h(6, 2, 2, 3, 3, seed=1))
    _run(lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 2), padding=(1, 0, 1),
                                         output_padding=(1, 0, 0), groups=2, dilation=(1, 2, 1)),
         _h(1, 4, 3, 4, 5), _h(4, 3, 3, 2, 3, seed=1))


def test_max_pool_indices_from_loaded_values():
    _run(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True),
         _h(1, 2, 5, 6))


def test_masked_scatter_and_masked_accumulating_index_put():
    mask = torch.tensor([[True, False, True], [False, False, True]])
    _run(lambda a, m, s: a.masked_scatter(m, s), _h(2, 3), mask, _h(7, seed=1))
    index = torch.tensor([0, 9, 2, -9])  # out of range where masked off
    keep = torch.tensor([True, False, True, False])
    _run(lambda a, m, i, v: torch.ops.aten._unsafe_masked_index_put_accumulate(a, m, [i], v),
         _h(6), keep, index, _h(4, seed=1))


# --- decomp_ops.py: ATen fallbacks rewritten for the device ------------------------------------


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 1.5, float("inf")])
def test_pdist_gathers_its_pairs_by_constant_indices(p):
    """pdist's pair indices are tensor constants Inductor lifts out of the graph: the IR lists
    them as inputs (`constants`) and the runner passes their values (zeros were read before)."""
    from spyre_capture.capture import capture

    (ir,) = capture(lambda x: F.pdist(x, p), [_h(5, 3)])
    assert len(ir["constants"]) == 2 and ir["inputs"][1:] == ir["constants"]
    result = _run(lambda x: F.pdist(x, p), _h(5, 3))
    assert result.outputs.shape == (10,) and result.outputs.abs().sum() > 0


def test_nanmedian_skips_nan_and_takes_the_lower_middle():
    x = torch.tensor([[1.0, float("nan"), 3.0, 2.0], [2.0, 1.0, 2.0, 1.0],
                      [5.0, 4.0, float("nan"), float("nan")]], dtype=torch.float16)
    result = _run(lambda t: torch.nanmedian(t, 1), x)
    values, indices = result.outputs
    assert torch.equal(values, torch.tensor([2.0, 1.0, 4.0], dtype=torch.float16))
    assert indices.tolist() == torch.nanmedian(x, 1).indices.tolist() == [3, 3, 1]
    _run(torch.nanmedian, _h(3, 5))


def test_an_empty_output_no_node_writes_is_made_by_the_host():
    """Training-mode batch norm returns an empty uint8 reserve (a dtype the chip lacks) that no
    kernel writes: it is left out of the device program and made on the host, and the other
    outputs come from the chip."""
    from spyre_capture.capture import capture
    from spyre_capture.capture import _split_unwritten_empty_outputs as split

    def f(x, w, b, mean, var):
        return torch.ops.aten._batch_norm_with_update(x, w, b, mean, var, 0.1, 1e-5)

    args = (_h(2, 3, 4, 4), _h(3, seed=1), _h(3, seed=2), torch.zeros(3, dtype=torch.float16),
            torch.ones(3, dtype=torch.float16))
    (ir,) = capture(f, [a.clone() for a in args])
    device_ir, empties = split(ir)
    assert [(i, o["dtype"], o["size"]) for i, o in empties] == [(3, "uint8", [0])]
    assert all(b["dtype"] != "uint8" for b in device_ir["buffers"])
    result = _run(f, *args)
    assert result.outputs[3].dtype == torch.uint8 and result.outputs[3].shape == (0,)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_with_padding_and_a_last_offset(mode):
    weight = _h(10, 4)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6, 8])  # an empty bag, and the end given
    _run(lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, padding_idx=4,
                                         include_last_offset=True), weight, indices, offsets)


def test_embedding_bag_with_per_sample_weights():
    _run(lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
         _h(10, 4), torch.tensor([1, 2, 4, 5, 4]), torch.tensor([0, 2]), _h(5, seed=3))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist(p):
    _run(lambda a, b: torch.cdist(a, b, p=p), _h(2, 5, 3), _h(2, 4, 3, seed=1))


def test_bilinear_histc_and_nonzero_static():
    _run(F.bilinear, _h(6, 3), _h(6, 4, seed=1), _h(5, 3, 4, seed=2), _h(5, seed=3))
    x = torch.tensor([0.5, 2.0, 2.0, -1.0, 7.5, 10.0, 3.25], dtype=torch.float16)
    _run(lambda t: torch.histc(t, bins=4, min=0, max=10), x)
    _run(lambda t: torch.histc(t, bins=3), x)  # the data's own range
    _run(lambda t: torch.nonzero_static(t, size=5, fill_value=-7),
         torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype=torch.float16))


def test_pools_and_an_antialiased_resize_as_separable_matrices():
    """decomp_pools.py: big-window average pooling (ceil mode, padding, each divisor), adaptive
    3-D average pooling (an empty batch too) and the antialiased bilinear resize (torch's own
    weights, in both directions and with scale factors) are GEMMs on the chip."""
    x = _h(2, 3, 11, 13)
    _run(lambda t: F.avg_pool2d(t, (6, 6), (3, 3), (2, 3), ceil_mode=True,
                                count_include_pad=True, divisor_override=2), x)
    _run(lambda t: F.avg_pool2d(t, 7, 2, 3, ceil_mode=True, count_include_pad=False), x)
    _run(lambda t: F.avg_pool2d(t, (5, 6), 4), x)
    _run(lambda t: F.adaptive_avg_pool3d(t, (3, 4, 5)), _h(2, 2, 7, 6, 9))
    _run(lambda t: F.adaptive_avg_pool3d(t, (2, 2, 2)), _h(0, 2, 4, 4, 4))
    _run(lambda t: F.interpolate(t, size=(5, 30), mode="bilinear", antialias=True), x)
    _run(lambda t: F.interpolate(t, scale_factor=(0.4, 1.7), mode="bilinear", antialias=True,
                                 align_corners=True), x)


def test_segment_reduce_histogram_multinomial_and_gcd():
    d = _h(7, 3)
    lengths = torch.tensor([2, 0, 4, 1])
    for reduce in ("sum", "mean", "max", "min", "prod"):
        for initial in (None, 0.5):
            _run(lambda t, n: torch.segment_reduce(t, reduce, lengths=n, initial=initial),
                 d, lengths)
    offsets = torch.tensor([[0, 3, 3, 6], [0, 1, 5, 6]])
    _run(lambda t, o: torch.segment_reduce(t, "max", offsets=o, axis=1), _h(2, 6, 3), offsets)

    x = torch.tensor([0.5, 2.0, 2.0, -1.0, 7.5, 10.0, 3.25, 5.0])
    _run(lambda t: torch.histogram(t, bins=5), x)
    _run(lambda t, w: torch.histogram(t, bins=4, range=(0.0, 8.0), weight=w, density=True),
         x, torch.rand(8, generator=torch.Generator().manual_seed(4)))
    _run(lambda t: torch.histogram(t, bins=torch.tensor([-2.0, 0.0, 2.5, 10.0])), x)

    probs = torch.tensor([[0.0, 1.0, 3.0, 0.5], [2.0, 2.0, 0.0, 1.0]])
    for replacement in (False, True):
        r = spyre_sim.run(lambda p: torch.multinomial(p, 3, replacement=replacement), (probs,),
                          arch="tiny", cache=False)
        drawn = r.outputs
        assert drawn.shape == (2, 3) and drawn.dtype == torch.int64
        assert not (probs.gather(1, drawn) == 0).any(), drawn  # never a zero-probability one
        if not replacement:
            assert all(len(set(row.tolist())) == 3 for row in drawn), drawn

    a = torch.tensor([12, 18, -4, 0, 0, 7, -2147483647], dtype=torch.int32)
    b = torch.tensor([8, 27, 6, 5, 0, 13, 3], dtype=torch.int32)
    _run(torch.gcd, a, b)
    _run(torch.lcm, a[:6], b[:6])


def test_householder_products_mode_and_histogramdd():
    """decomp_linalg.py: Q from Householder reflectors (orgqr) and its product with a matrix
    from either side (ormqr), as GEMM steps; mode by counting (rows shorter than 16 elements,
    where eager's index is the last occurrence); histogramdd over bin counts and edges."""
    g = torch.Generator().manual_seed(5)
    a, tau = torch.randn(2, 6, 4, generator=g), torch.rand(2, 3, generator=g)
    _run(torch.linalg.householder_product, a, tau)
    c, tau4 = torch.randn(2, 6, 5, generator=g), torch.rand(2, 4, generator=g)
    for left in (True, False):
        for transpose in (False, True):
            other = c if left else c.transpose(-1, -2)
            _run(lambda x, t, o: torch.ormqr(x, t, o, left=left, transpose=transpose),
                 a, tau4, other)
    x = torch.tensor([[3.0, 1, 3, 2, 1, 5], [4, 4, 2, 2, 9, 9], [7, 7, 7, 0, 0, 0]],
                     dtype=torch.float16)
    _run(lambda t: torch.mode(t, 1), x)
    _run(lambda t: torch.mode(t, 0, keepdim=True), x)
    pts = torch.tensor([[1.0, 2], [1, 5], [3, 3], [0.5, 4], [2, 2]])
    _run(lambda p: torch.histogramdd(p, bins=[2, 3]), pts)
    _run(lambda p, w: torch.histogramdd(p, bins=[torch.tensor([0.0, 1.5, 4.0]),
                                                  torch.tensor([2.0, 3.0, 6.0])],
                                        weight=w, density=True),
         pts, torch.rand(5, generator=g))


@pytest.mark.parametrize("mode,padding,align", [
    ("bilinear", "zeros", False), ("bilinear", "border", True), ("nearest", "reflection", False),
    ("bilinear", "reflection", True)])
def test_grid_sample_3d_gathers_its_taps(mode, padding, align):
    g = torch.Generator().manual_seed(6)
    grid = (torch.rand(2, 3, 4, 5, 3, generator=g) * 2.6 - 1.3).to(torch.float16)
    _run(lambda a, gr: F.grid_sample(a, gr, mode=mode, padding_mode=padding,
                                     align_corners=align), _h(2, 3, 4, 5, 6), grid)


def test_lu_unpack_builds_the_permutation_from_the_pivots():
    a = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(7))
    lu, pivots = torch.linalg.lu_factor(a)
    r = _run(torch.lu_unpack, lu, pivots)
    p, low, up = r.outputs
    torch.testing.assert_close(p @ low @ up, a, rtol=1e-4, atol=1e-4)


def test_triangular_solves_and_cholesky_by_substitution():
    g = torch.Generator().manual_seed(8)
    a = torch.randn(2, 5, 5, generator=g) + 4 * torch.eye(5)
    b = torch.randn(2, 5, 3, generator=g)
    for upper in (True, False):
        _run(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper), a, b)
        _run(lambda x, y: torch.linalg.solve_triangular(x, y.mT, upper=upper, left=False,
                                                        unitriangular=True), a, b)
        for transpose in (False, True):
            _run(lambda y, x: torch.triangular_solve(y, x, upper=upper, transpose=transpose),
                 b, a)
    spd = a @ a.mT + torch.eye(5)
    for upper in (False, True):
        r = _run(lambda x: torch.linalg.cholesky_ex(x, upper=upper), spd)
        assert r.outputs[1].tolist() == [0, 0]
    bad = spd.clone()
    bad[1, 2, 2] = -50.0  # the third leading minor of the second matrix is not positive
    r = spyre_sim.run(lambda x: torch.linalg.cholesky_ex(x).info, (bad,), arch="tiny",
                      cache=False)
    assert r.outputs.tolist() == torch.linalg.cholesky_ex(bad).info.tolist() == [0, 3]


def test_lu_with_partial_pivoting_and_what_uses_it():
    """decomp_lu.py: getrf's pivots and packed factors, det and slogdet (a singular matrix
    too), the inverse and solves from the factors, as eager's LAPACK gives them."""
    g = torch.Generator().manual_seed(9)
    a = torch.randn(3, 5, 5, generator=g)
    a[2, 4] = a[2, 1]  # a singular matrix: two equal rows
    _run(torch.linalg.lu_factor_ex, a[:2])
    _run(torch.linalg.lu, torch.randn(2, 6, 4, generator=g))
    _run(torch.linalg.det, a)
    _run(torch.linalg.slogdet, a[:2])
    _run(lambda x: torch.linalg.inv_ex(x).inverse, a[:2])
    b = torch.randn(2, 5, 3, generator=g)
    _run(lambda x, y: torch.linalg.solve_ex(x, y).result, a[:2], b)
    _run(lambda x, y: torch.linalg.solve_ex(x, y).result, a[:2], b[..., 0])  # vectors
    lu, piv = torch.linalg.lu_factor(a[:2])
    for left in (True, False):
        for adjoint in (False, True):
            _run(lambda f, p, y: torch.linalg.lu_solve(f, p, y, left=left, adjoint=adjoint),
                 lu, piv, b if left else b.mT)


def test_a_singular_input_raises_eagers_error_after_the_chip_computed_its_info():
    """linalg.inv, linalg.solve and cholesky compute on the chip and end in torch's check of
    the factorisation's info (SCHEMA.md `checks`): read back after the run, it raises what
    eager raises, and passes a regular input."""
    g = torch.Generator().manual_seed(10)
    a = torch.randn(2, 4, 4, generator=g) + 4 * torch.eye(4)
    _run(torch.linalg.inv, a)
    singular = a.clone()
    singular[1, 2] = 0.0  # a zero row: a zero pivot in LAPACK's order and in the chip's
    spd = a[0] @ a[0].mT
    not_pd = spd.clone()
    not_pd[2, 2] = -1.0
    for fn, x in ((torch.linalg.inv, (singular,)),
                  (torch.linalg.solve, (singular, torch.ones(2, 4, 1))),
                  (torch.cholesky, (not_pd,))):
        with pytest.raises(torch.linalg.LinAlgError) as want:
            fn(*x)
        with pytest.raises(torch.linalg.LinAlgError) as got:
            spyre_sim.run(fn, x, arch="tiny", cache=False)
        assert str(got.value) == str(want.value)
    r = spyre_sim.run(torch.linalg.inv, (singular,), arch="tiny", cache=False, timing_only=True)
    assert r.cycles > 0  # timing-only computes no info and checks nothing


def test_householder_qr_gives_lapacks_signs_and_reflectors():
    """decomp_spectral.py: geqrf's packed reflectors and tau, and Q and R in every mode, as
    LAPACK's dgeqrf gives them (tall, wide and batched)."""
    g = torch.Generator().manual_seed(12)
    _run(torch.geqrf, torch.randn(2, 6, 4, generator=g))
    for mode in ("reduced", "complete", "r"):
        _run(lambda x: torch.linalg.qr(x, mode=mode).R, torch.randn(3, 5, generator=g))
    _run(lambda x: torch.linalg.qr(x, mode="complete"), torch.randn(6, 3, generator=g))


def _sign_free(vectors, columns=True):
    """Eigen- or singular vectors with each one's largest entry positive."""
    v = vectors if columns else vectors.mT
    big = torch.gather(v, -2, v.abs().argmax(-2, keepdim=True))
    v = v * torch.where(big < 0, -1.0, 1.0)
    return v if columns else v.mT


@pytest.mark.parametrize("n", [5, 10])
def test_jacobi_eigh_and_svd_converge_to_lapacks_values(n):
    """Cyclic Jacobi (two-sided for eigh, one-sided for the SVD) against LAPACK: values to fp32
    rounding, vectors up to sign, U orthonormal and completed for full_matrices."""
    g = torch.Generator().manual_seed(13 + n)
    a = torch.randn(2, n, n, generator=g)
    r = spyre_sim.run(lambda x: torch.linalg.eigh(x, UPLO="U"), (a,), arch="tiny", cache=False)
    values, vectors = r.outputs
    want = torch.linalg.eigh(a, UPLO="U")
    torch.testing.assert_close(values, want.eigenvalues, rtol=1e-4, atol=1e-4 * n)
    torch.testing.assert_close(_sign_free(vectors), _sign_free(want.eigenvectors), rtol=1e-3,
                               atol=1e-3)
    tall = torch.randn(n + 3, n - 2, generator=g)
    for x in (tall, tall.mT):
        u, s, vh = spyre_sim.run(lambda y: torch.linalg.svd(y, full_matrices=True), (x,),
                                 arch="tiny", cache=False).outputs
        wu, ws, wvh = torch.linalg.svd(x, full_matrices=True)
        k = s.shape[-1]
        torch.testing.assert_close(s, ws, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(_sign_free(u[:, :k]), _sign_free(wu[:, :k]), rtol=1e-3,
                                   atol=1e-3)
        torch.testing.assert_close(_sign_free(vh[:k], columns=False),
                                   _sign_free(wvh[:k], columns=False), rtol=1e-3, atol=1e-3)
        for q in (u, vh):
            torch.testing.assert_close(q @ q.mT, torch.eye(q.shape[0]), rtol=0, atol=1e-5)


def test_pinv_rank_and_matrix_exp():
    """The pseudo-inverse of a rank-deficient matrix (the zero singular value's U column
    orthonormalised, not divided by), matrix_rank with its fp32 tolerances, hermitian forms
    through eigh, cholesky_solve and cholesky_inverse, and exp by scaling and squaring (a
    1-norm of 8 takes 4 squarings)."""
    g = torch.Generator().manual_seed(14)
    q1 = torch.linalg.qr(torch.randn(5, 2, generator=g)).Q
    q2 = torch.linalg.qr(torch.randn(4, 2, generator=g)).Q
    low_rank = q1 @ torch.diag(torch.tensor([3.0, 0.5])) @ q2.mT
    _run(torch.linalg.pinv, low_rank)
    r = _run(torch.linalg.matrix_rank, low_rank)
    assert r.outputs.item() == 2
    a = torch.randn(5, 5, generator=g)
    spd = a @ a.mT + torch.eye(5)
    _run(lambda x: torch.linalg.pinv(x, hermitian=True, atol=0.5), spd)
    _run(lambda x: torch.linalg.matrix_rank(x, hermitian=True, rtol=0.1), spd)
    low = torch.linalg.cholesky(spd)
    b = torch.randn(5, 3, generator=g)
    _run(torch.cholesky_solve, b, low)
    _run(lambda y, u: torch.cholesky_solve(y, u, upper=True), b, low.mT)
    _run(torch.cholesky_inverse, low)
    _run(torch.linalg.matrix_exp, 8 * a / a.abs().sum(0).amax())
    _run(torch.linalg.matrix_exp, a / 4)


def test_past_the_jacobi_limit_the_refusal_says_why_and_the_host_runs_it():
    """An SVD of more than JACOBI_MAX_N columns stays a fallback kernel: the IR node's `why`
    names the limit in the refusal; with host fallback the host computes it."""
    a = torch.randn(20, 17, generator=torch.Generator().manual_seed(15))
    with pytest.raises(Exception, match=r"only up to 16 columns .*this 20 x 17 operand has 17"):
        spyre_sim.run(torch.linalg.svdvals, (a,), arch="tiny", cache=False)
    r = spyre_sim.run(torch.linalg.svdvals, (a,), arch="tiny", cache=False,
                      set=["compiler.host_fallback=on"])
    assert r.outputs_match is True and r.summary["host"]["calls"] == 1
