"""Moving tensors to and from the simulator's device memory as plain bytes."""

import numpy as np
import torch

_DTYPES = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "i8": torch.int8,
    "i32": torch.int32,
    "i64": torch.int64,
    "bool": torch.bool,
}
if hasattr(torch, "float8_e4m3fn"):  # OCP FP8 E4M3FN, the simulator's f8e4m3
    _DTYPES["f8e4m3"] = torch.float8_e4m3fn


def torch_dtype(name: str) -> torch.dtype:
    if name not in _DTYPES:  # i4 (two per byte) has no torch dtype
        raise ValueError(f"dtype {name!r} has no torch equivalent here (known: {sorted(_DTYPES)})")
    return _DTYPES[name]


def _span(size, stride) -> int:
    if any(s == 0 for s in size):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(size, stride))


def to_storage(t: torch.Tensor, binding: dict) -> bytes:
    """The bytes of `t` laid out with the binding's size and stride (its storage span)."""
    dtype = torch_dtype(binding["dtype"])
    size, stride = list(binding["size"]), list(binding["stride"])
    if list(t.shape) != size:
        raise ValueError(f"input {binding['name']}: shape {list(t.shape)}, expected {size}")
    flat = torch.zeros(_span(size, stride), dtype=dtype)
    if flat.numel():
        flat.as_strided(size, stride).copy_(t.detach().to("cpu", dtype))
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def from_storage(data: bytes, binding: dict) -> torch.Tensor:
    dtype = torch_dtype(binding["dtype"])
    size, stride = list(binding["size"]), list(binding["stride"])
    raw = torch.from_numpy(np.frombuffer(bytearray(data), dtype=np.uint8))
    flat = raw.view(dtype) if raw.numel() else torch.empty(0, dtype=dtype)
    return flat.as_strided(size, stride).clone()


def empty_like_binding(binding: dict, device) -> torch.Tensor:
    """An uninitialised tensor of the binding's size, stride and dtype on `device` (meta: no
    memory): the output of a timing-only run, which computes no values."""
    return torch.empty_strided(list(binding["size"]), list(binding["stride"]),
                               dtype=torch_dtype(binding["dtype"]), device=device)
