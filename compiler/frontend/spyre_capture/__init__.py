"""Capture Inductor's scheduled IR (SCHEMA.md v1) for the spyre-sim compiler.

Importing this package checks the torch version (2.13.x) and raises UnsupportedTorch otherwise.
"""

from .errors import CaptureError, UnsupportedTorch
from .adapter import check_torch_version  # noqa: E402  (raises UnsupportedTorch on import)
from .capture import Capture, capture, compile_graph, to_json

__all__ = ["Capture", "CaptureError", "UnsupportedTorch", "capture", "check_torch_version", "compile_graph", "to_json"]
