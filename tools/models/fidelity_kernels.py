"""The kernels IBM measured on Spyre (../shared/calibration/spyre_kernels.csv, described in
spyre_kernels.md beside it), as PyTorch expressions for capture.

A row of the CSV names an `op` and its shape (rows R, cols C, and `n` for matmuls, `to_mid` for
outer transposes); `shape_key(row)` names the graph that row runs and `case(key)` builds it
(an OpCase as in ops.py: fp16 `torch.rand` inputs, seeded). The `*_sep` chains are n-1
separately compiled two-input adds: their graph is the `add` of the same shape, run n-1 times
(`graphs_per_call`). Golden captures of the calibration rows' shapes live under
tests/data/ir/bench/fidelity/ (tests/data/ir/regenerate.py fidelity); tools/bench/fidelity
captures any other shape it meets.
"""

from __future__ import annotations

import csv
import json
import pathlib
import re
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ops import H, OpCase, _seeded  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_CSV = ROOT.parent / "shared" / "calibration" / "spyre_kernels.csv"

# op -> (graph op, graphs one call launches); the chains of separately compiled adds
SEPARATE = {"add3_sep": ("add", 2), "add4_sep": ("add", 3)}


def _rand(*shape):
    return torch.rand(*shape, dtype=H)


def _chain(k):
    def fn(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = acc + x
        return acc

    return fn, k


def _expr(op: str, r: int, c: int, n: int, to_mid: int) -> OpCase:
    """The PyTorch expression of spyre_kernels.md for `op` at R = r, C = c."""
    x = lambda: (_rand(r, c),)  # noqa: E731
    if op == "add":
        return OpCase(torch.add, _seeded(lambda: (_rand(r, c), _rand(r, c))))
    if op in ("add3", "add4"):
        fn, k = _chain(int(op[-1]))
        return OpCase(fn, _seeded(lambda: tuple(_rand(r, c) for _ in range(k))))
    if op == "add_indep2":
        return OpCase(lambda a, b, cc, d: (a + b, cc + d),
                      _seeded(lambda: tuple(_rand(r, c) for _ in range(4))))
    if op == "neg":
        return OpCase(torch.neg, _seeded(x))
    if op == "copy":
        return OpCase(lambda t: t + 1.0, _seeded(x))
    if op == "bcast":
        return OpCase(torch.add, _seeded(lambda: (_rand(r, c), _rand(1, c))))
    if op == "bcastcol":
        return OpCase(torch.add, _seeded(lambda: (_rand(r, c), _rand(r, 1))))
    if op in ("sumrow", "read"):
        return OpCase(lambda t: t.sum(dim=-1), _seeded(x))
    if op == "amax":
        return OpCase(lambda t: t.amax(dim=-1), _seeded(x))
    if op == "ctsum":
        return OpCase(lambda t: t.sum(dim=0),
                      _seeded(lambda: ((torch.randn(r, c) * 0.1).to(H),)))
    if op == "transpose":
        return OpCase(lambda t: t.transpose(0, 1).contiguous(), _seeded(x))
    if op == "transpose_outer":
        return OpCase(lambda t: t.transpose(0, 1).contiguous(),
                      _seeded(lambda: (_rand(r, to_mid, c),)))
    if op == "cat0":
        return OpCase(lambda t: torch.cat([t, t], dim=0), _seeded(x))
    if op == "softmax_row_tiling":
        return OpCase(lambda t: torch.softmax(t, dim=-1),
                      _seeded(lambda: (torch.randn(r, c, dtype=H),)))
    if op in ("mm", "mmwd"):
        return OpCase(torch.mm, _seeded(lambda: (_rand(r, c), _rand(c, n))))
    if op == "layernorm":  # tpuv3_measured.csv: LayerNorm over the last dim, with its affine
        return OpCase(lambda t, w, b: torch.nn.functional.layer_norm(t, (c,), w, b),
                      _seeded(lambda: (torch.randn(r, c, dtype=H), _rand(c), _rand(c))))
    raise KeyError(f"unknown op '{op}' (spyre_kernels.md lists the ops)")


def _int(row: dict, field: str) -> int:
    v = (row.get(field) or "").strip()
    return int(v) if v else 0


def shape_key(row: dict) -> str:
    """The graph a CSV row runs: `<op>_<R>x<C>[_n<N>][_mid<M>]` (the `*_sep` chains: their add;
    mm and mmwd share one graph, the core count is a compiler option)."""
    op = row["op"].strip()
    op = SEPARATE.get(op, (op, 1))[0]
    op = {"read": "sumrow", "mmwd": "mm"}.get(op, op)
    key = f"{op}_{_int(row, 'rows')}x{_int(row, 'cols')}"
    if _int(row, "n"):
        key += f"_n{_int(row, 'n')}"
    if _int(row, "to_mid"):
        key += f"_mid{_int(row, 'to_mid')}"
    return key


def graphs_per_call(row: dict) -> int:
    return SEPARATE.get(row["op"].strip(), (None, 1))[1]


def _conv(key: str) -> OpCase | None:
    """tpuv3_measured.csv's `conv_N x H x W x Cin x Cout x kernel x stride x pad`: a 2-D
    convolution of an fp16 input, no bias. Input and weights are channels-last (NHWC, OHWI):
    on the TPU, XLA's layout assignment picks the operands' layouts for the convolution (JAX's
    default is NHWC), so the measured kernel has no layout copies around it, and Inductor's
    graph of channels-last operands holds the convolution alone."""
    m = re.fullmatch(r"conv_(\d+)x(\d+)x(\d+)x(\d+)x(\d+)x(\d+)x(\d+)x(\d+)", key)
    if not m:
        return None
    n, h, w, ci, co, k, st, pad = (int(v) for v in m.groups())
    last = torch.channels_last
    return OpCase(lambda x, wt: torch.nn.functional.conv2d(x, wt, stride=st, padding=pad),
                  _seeded(lambda: (_rand(n, ci, h, w).to(memory_format=last),
                                   (_rand(co, ci, k, k) * 0.1).to(memory_format=last))))


def case(key: str) -> OpCase:
    conv = _conv(key)
    if conv:
        return conv
    m = re.fullmatch(r"(?P<op>.+?)_(?P<r>\d+)x(?P<c>\d+)(?:_n(?P<n>\d+))?(?:_mid(?P<mid>\d+))?",
                     key)
    if not m:
        raise KeyError(f"not a fidelity shape key: '{key}'")
    return _expr(m["op"], int(m["r"]), int(m["c"]), int(m["n"] or 0), int(m["mid"] or 0))


TPUV3_CSV = DEFAULT_CSV.parent / "tpuv3_measured.csv"


def tpuv3_rows(path: pathlib.Path = TPUV3_CSV) -> list[dict]:
    """tpuv3_measured.csv's workloads (comment lines skipped): `workload`, `tpuv3_cycles`, and
    `key`, the graph that runs it (None for a workload without an expression here)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: the measured TPUv3 cycles (../shared/calibration/) "
                                "are missing")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for row in rows:
        w = row["workload"]
        g = re.fullmatch(r"gemm_(\d+)x(\d+)x(\d+)", w)
        ln = re.fullmatch(r"layernorm_(\d+)x(\d+)", w)
        row["key"] = (f"mm_{g[1]}x{g[2]}_n{g[3]}" if g else
                      f"layernorm_{ln[1]}x{ln[2]}" if ln else w if _conv(w) else None)
    return rows


def read_rows(path: pathlib.Path = DEFAULT_CSV) -> list[dict]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: IBM's measured kernels (../shared/calibration/) "
                                "are missing")
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def measured_keys() -> list[str]:
    """The graphs of spyre_measured.json's points: the matmul K-sweep and the softmax."""
    m = json.loads((DEFAULT_CSV.parent / "spyre_measured.json").read_text())
    return [f"mm_2048x{k}_n2048" for k in m["matmul_k_sweep"]["points_us"]] + [
        "softmax_row_tiling_512x1024"]


def shape_keys(path: pathlib.Path = DEFAULT_CSV) -> list[str]:
    """Every graph the rows of the CSV at `path` and spyre_measured.json's points run, sorted."""
    return sorted({shape_key(row) for row in read_rows(path)} | set(measured_keys()))
