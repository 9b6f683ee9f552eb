"""Model entries of the compile cache: a timing-only run of a model file that was seen before
skips building the model and Dynamo, and replays its captured graphs.

A timing-only run reads no tensor values, so what it simulates is fixed by the graphs Dynamo
captured and the order the model called them in. The first run of a model file records both,
with everything the capture could depend on:
- every file the run opened for reading and every module it loaded (the model file, the modules
  it imports, torch, transformers, spyre_sim's own code, the data files the model reads), each
  with its size and modification time, and a SHA-1 of its contents when it lies outside the
  Python installation (sys.prefix, sys.base_prefix, site-packages);
- the key of the entry: the model file's absolute path and contents, the working folder, the
  Python version and the environment (less a few variables a shell changes between commands).
A later run with the same key whose recorded files are all unchanged does not run the model
file: its graphs are compiled (through the program cache, keyed on the configuration and the
build) and simulated in the recorded order. Anything else misses and runs the model.

Not seen, so run such a model with `--no-cache`: what the model takes from outside files and
the environment (the clock, the network, random numbers that change which graphs it builds),
and a new file that would shadow a module it imports. Files the run itself wrote are its
products, not its inputs, and are left out; so are /proc, /sys and /dev.
"""

from __future__ import annotations

import hashlib
import json
import os
import site
import sys
import time
from typing import Optional

KIND = "models"  # the entries' folder in the cache ($SPYRE_SIM_CACHE/models)
VERSION = "spyre-sim model entry 1"
# Set by a shell between two commands, or the cache's own size: no bearing on a capture.
_VOLATILE_ENV = ("OLDPWD", "PWD", "SHLVL", "_", "SPYRE_SIM_CACHE_MAX_MB")
_SKIPPED_ROOTS = ("/proc/", "/sys/", "/dev/")
_HASH_LIMIT = 4 << 20  # bytes: a larger file outside the installation is checked by its stat

_opened: Optional[set] = None  # paths opened for reading while a recording is on
_hooked = []


def _audit(event, args):
    if _opened is None or event != "open":
        return
    path, mode, flags = args
    if isinstance(path, int):
        return
    if mode is None:  # os.open: flags say whether it reads
        if flags & (os.O_WRONLY | os.O_RDWR) == os.O_WRONLY:
            return
    elif not any(c in mode for c in "r+"):
        return
    try:
        _opened.add(os.path.abspath(os.fsdecode(os.fspath(path))))
    except (TypeError, ValueError):
        pass


def key(model_path: str) -> str:
    """Hex SHA-1 of what a model entry is looked up by."""
    h = hashlib.sha1()

    def part(s) -> None:
        b = s.encode() if isinstance(s, str) else s
        h.update(len(b).to_bytes(8, "little") + b)

    path = os.path.abspath(model_path)
    part(VERSION)
    part(sys.version)
    part(path)
    part(os.getcwd())
    with open(path, "rb") as f:
        part(f.read())
    part(repr(sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE_ENV)))
    return h.hexdigest()


def _installed_roots() -> tuple:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:  # a virtualenv's old site.py
        pass
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


def _stat_record(path: str, roots: tuple, since_ns: int) -> Optional[list]:
    """[path, size, mtime_ns, sha1 or None] of a regular file read before `since_ns`, else
    None (gone, not a file, or written by the run itself)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path) or st.st_mtime_ns >= since_ns:
        return None
    digest = None
    if not os.path.realpath(path).startswith(roots) and st.st_size <= _HASH_LIMIT:
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha1(f.read()).hexdigest()
        except OSError:
            return None
    return [path, st.st_size, st.st_mtime_ns, digest]


class Recording:
    """The files a model run reads, from `start()` to `files()`."""

    def __init__(self):
        self.start_ns = 0

    def start(self) -> None:
        global _opened
        if not _hooked:  # an audit hook cannot be removed: one per process, off when idle
            sys.addaudithook(_audit)
            _hooked.append(True)
        _opened = set()
        self.start_ns = time.time_ns()

    def stop(self) -> set:
        global _opened
        seen, _opened = _opened or set(), None
        return seen

    def files(self, opened: set) -> list:
        """The recorded files: what was opened and every loaded module's file, without byte
        code caches (the module's source stands for them) and the run's own products."""
        paths = set(opened)
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if isinstance(f, str):
                paths.add(os.path.abspath(f))
        roots = _installed_roots()
        out = []
        for p in sorted(paths):
            if p.startswith(_SKIPPED_ROOTS) or f"{os.sep}__pycache__{os.sep}" in p:
                continue
            rec = _stat_record(p, roots, self.start_ns)
            if rec:
                out.append(rec)
        return out


def store(entry_key: str, files: list, graphs: list, calls: list, torch_version: str) -> None:
    """Keeps a model entry: the recorded files, the captured graphs' IR (JSON text) and the
    order they were called in (indices into `graphs`)."""
    from ._core import core

    entry = {"version": VERSION, "files": files, "graphs": graphs, "calls": calls,
             "torch_version": torch_version}
    core.cache_store(KIND, entry_key, json.dumps(entry).encode())


def changed_file(files: list) -> Optional[str]:
    """The first recorded file that is gone or differs from its record, else None."""
    for path, size, mtime_ns, digest in files:
        try:
            st = os.stat(path)
        except OSError:
            return path
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            return path
        if digest is not None:
            try:
                with open(path, "rb") as f:
                    if hashlib.sha1(f.read()).hexdigest() != digest:
                        return path
            except OSError:
                return path
    return None


def lookup(entry_key: str) -> Optional[dict]:
    """The model entry of `entry_key` whose recorded files are all unchanged, else None (none
    stored, unreadable, another version, or a file changed)."""
    from ._core import core

    data = core.cache_load(KIND, entry_key)
    if data is None:
        return None
    try:
        entry = json.loads(data)
        if entry.get("version") != VERSION:
            return None
        files, graphs, calls = entry["files"], entry["graphs"], entry["calls"]
        if not graphs or any(not 0 <= c < len(graphs) for c in calls):
            return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # a damaged entry: the model runs and stores a new one
    return entry if changed_file(files) is None else None
