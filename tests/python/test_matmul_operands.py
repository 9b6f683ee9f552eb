"""A matmul's A operand read column-major (compiler/include/spyre/compiler/
matmul_operand_copy.h) gets a row-major copy in front of the matmul. On "tiny", against eager:
each case computes eager's values and the report names the copy; operands that stream as they
are get none."""

import pytest
import torch

import spyre_sim


def _gen():
    return torch.Generator().manual_seed(0)


def _half(*shape):
    return torch.randn(*shape, generator=_gen()).to(torch.float16)


CASES = {
    "mm_a_transposed": (lambda a, b: a.t() @ b, lambda: (_half(48, 40), _half(48, 24)), ["_a"]),
    "addmm_a_transposed": (lambda a, b, c: torch.addmm(c, a.t(), b),
                           lambda: (_half(48, 40), _half(48, 24), _half(24)), ["_a"]),
    "bmm_a_transposed": (lambda a, b: torch.bmm(a.transpose(1, 2), b),
                         lambda: (_half(3, 48, 40), _half(3, 48, 24)), ["_a"]),
    "a_transposed_slice": (lambda a, b: a.t()[4:20] @ b,
                           lambda: (_half(48, 40), _half(48, 24)), ["_a"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_copy_computes_eagers_values(name):
    fn, make, which = CASES[name]
    args = make()
    r = spyre_sim.run(fn, args, arch="tiny", cache=False)
    assert r.summary["outputs_match"] is True, r.summary
    copies = [c for rep in r.reports for c in rep.get("operand_copies", [])]
    assert [c["buffer"][len(c["node"]):len(c["node"]) + 2] for c in copies] == which, copies
    kernels = [k["name"] for rep in r.reports for k in rep["kernels"]]
    assert all(any(c["copy_node"] in k for k in kernels) for c in copies), (copies, kernels)


def test_operands_that_stream_as_they_lie_are_not_copied():
    """Row-major A and B, and B transposed (read by columns): no copy."""
    a, b = _half(32, 48), _half(48, 24)
    for fn, args in [(torch.mm, (a, b)), (lambda x, y: x @ y.t(), (a, _half(24, 48)))]:
        r = spyre_sim.run(fn, args, arch="tiny", cache=False)
        assert r.summary["outputs_match"] is True
        assert not any(rep.get("operand_copies") for rep in r.reports)
