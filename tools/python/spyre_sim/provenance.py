"""Where a result came from. Every output folder (run, sweep, regress) holds provenance.json:
the command line, the spyre-sim version and git commit of the build, the torch version, the
architecture and its overrides, and the name of the effective configuration file beside it.
The format is made in C++ (tools/runner/include/spyre/runner/provenance.h), so the CLI's `run`
and these Python tools write the same thing."""

import importlib.metadata
import json
import os
import sys

from . import files

_command_line = None  # set by the spyre-sim CLI: its own argv


def set_command_line(argv) -> None:
    """The CLI records its whole command line here before handing over to a Python tool."""
    global _command_line
    _command_line = [str(a) for a in argv]


def command_line() -> list:
    """The spyre-sim command line when run by the CLI, else the Python one."""
    if _command_line is not None:
        return list(_command_line)
    return [sys.executable, *sys.argv]


def torch_version() -> str:
    """The installed torch's version, read from its metadata: no `import torch`."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


def build_info() -> dict:
    from ._core import core

    return dict(core.build_info())


def version_line() -> str:
    from ._core import core

    return core.version_line()


def record(arch="spyre", sets=(), effective_config="arch.yaml", torch=None, **extra) -> dict:
    """The provenance of a result made now. `torch`: (version, source) when the result's torch
    is known otherwise (an IR's capture); by default the installed one. `extra` keys are
    added (a sweep's spec file, a regression suite)."""
    from ._core import core

    version, source = torch if torch is not None else (torch_version(), "installed")
    rec = json.loads(core.provenance(command_line(), version, source, arch or "spyre",
                                     [str(s) for s in sets], effective_config))
    rec.update(extra)
    return rec


def write(folder, rec: dict) -> str:
    path = os.path.join(folder, "provenance.json")
    files.write_json(path, rec, indent=2)
    return path
