"""Writing results: every file appears whole or not at all (a temporary file in the same
folder, then a rename), so an interrupted run never leaves half a file behind."""

import json
import os


def write_atomic(path, data) -> None:
    """Writes `data` (str or bytes) to `path` atomically."""
    path = os.fspath(path)
    tmp = f"{path}.tmp.{os.getpid()}"
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    with open(tmp, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
        f.write(data)
    os.replace(tmp, path)


def write_json(path, obj, indent=1) -> None:
    write_atomic(path, json.dumps(obj, indent=indent, sort_keys=True) + "\n")
