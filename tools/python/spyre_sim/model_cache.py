"""Model entries of the compile cache: a timing-only run of a model file that was seen before
skips building the model and Dynamo, and replays its captured graphs.

A timing-only run reads no tensor values, so what it simulates is fixed by the graphs Dynamo
captured and the order the model called them in. The first run of a model file records both,
with everything the capture could depend on:
- every file the run opened for reading and every module it loaded (the model file, the modules
  it imports, torch, transformers, spyre_sim's own code, the data files the model reads), each
  with its size, modification and change times, and a SHA-1 of its contents when it lies
  outside the Python installation (sys.prefix, sys.base_prefix, site-packages) and is at most
  4 MiB; a file it tried to open that did not exist, as absent; every folder it listed, by a
  SHA-1 of the names in it;
- the key of the entry: the model file's absolute path and contents, the working folder, the
  Python executable, prefix and module search path, the Python version and the environment
  (less a few variables a shell changes between commands).
A later run with the same key whose records all still hold does not run the model file: its
graphs are compiled (through the program cache, keyed on the configuration and the build) and
simulated in the recorded order. Anything else misses and runs the model; so does a replay
that fails.

No entry is stored when an input was modified during the run (or within
MODIFIED_MARGIN_NS before it, or has a time in the future): what was read cannot be told
from what is there now. Files the run opened for writing are its products, not its inputs;
/proc, /sys and /dev are left out, and so are folders the run itself changed.

Not seen, so run such a model with `--no-cache`: files read by native code without Python's
`open` (safetensors, tokenizers' `from_file`, memory-mapped torch.load), existence checks
(`os.path.exists`), the clock, the network, and random numbers that change which graphs it
builds.
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
VERSION = "spyre-sim model entry 2"
# Set by a shell between two commands, or the cache's own size: no bearing on a capture.
_VOLATILE_ENV = ("OLDPWD", "PWD", "SHLVL", "_", "SPYRE_SIM_CACHE_MAX_MB")
_SKIPPED_ROOTS = ("/proc/", "/sys/", "/dev/")
_HASH_LIMIT = 4 << 20  # bytes: a larger file outside the installation is checked by its stat
# An input modified this close before the run's start (file systems with coarse times) or later
# may not be what the run read: such a run stores no entry.
MODIFIED_MARGIN_NS = 2_000_000_000


class _Seen:
    def __init__(self):
        self.read, self.written, self.listed = set(), set(), set()


_seen: Optional[_Seen] = None  # what the run touched while a recording is on
_hooked = []


def _abs(path) -> Optional[str]:
    if isinstance(path, int):
        return None
    try:
        return os.path.abspath(os.fsdecode(os.fspath(path if path is not None else ".")))
    except (TypeError, ValueError):
        return None


# Audit events that make or change a file: which of their arguments is that file.
_WRITTEN_ARG = {"os.rename": 1, "os.replace": 1, "os.link": 1, "os.symlink": 1,
                "shutil.copyfile": 1, "shutil.copymode": 1, "shutil.copystat": 1, "os.utime": 0,
                "os.truncate": 0}


def _audit(event, args):
    seen = _seen
    if seen is None:
        return
    if event == "open":
        path, mode, flags = args
        p = _abs(path)
        if p is None:
            return
        if mode is None:  # os.open: the flags say what it does
            writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC)
            reads = (flags & os.O_WRONLY) == 0
        else:
            writes = any(c in mode for c in "wax+")
            reads = "r" in mode or "+" in mode
        if writes:
            seen.written.add(p)
        if reads:
            seen.read.add(p)
    elif event in _WRITTEN_ARG:
        # a file made or changed by the run (Inductor writes its modules to a temporary name
        # and renames them): a product, whatever reads it later
        p = _abs(args[_WRITTEN_ARG[event]])
        if p is not None:
            seen.written.add(p)
    elif event in ("os.listdir", "os.scandir"):
        p = _abs(args[0])
        if p is not None:
            seen.listed.add(p)


class Unrecordable(Exception):
    """The run's inputs cannot be recorded (one changed while it ran): no entry is stored."""


def key(model_path: str) -> str:
    """Hex SHA-1 of what a model entry is looked up by."""
    h = hashlib.sha1()

    def part(s) -> None:
        b = s.encode() if isinstance(s, str) else s
        h.update(len(b).to_bytes(8, "little") + b)

    path = os.path.abspath(model_path)
    part(VERSION)
    part(sys.version)
    part(sys.executable or "")
    part(repr((sys.prefix, sys.base_prefix, sys.exec_prefix, sys.path)))
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


def _sha1_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def _listing(path: str) -> str:
    return hashlib.sha1("\0".join(sorted(os.listdir(path))).encode()).hexdigest()


def _skipped(path: str) -> bool:
    return path.startswith(_SKIPPED_ROOTS) or f"{os.sep}__pycache__{os.sep}" in path


class Recording:
    """What a model run reads, from `start()` to `stop()`; `records()` turns it into an entry's
    records."""

    def __init__(self):
        self.start_ns = 0

    def start(self) -> None:
        global _seen
        if not _hooked:  # an audit hook cannot be removed: one per process, off when idle
            sys.addaudithook(_audit)
            _hooked.append(True)
        _seen = _Seen()
        self.start_ns = time.time_ns()

    def stop(self) -> _Seen:
        global _seen
        seen, _seen = _seen or _Seen(), None
        return seen

    def records(self, seen: _Seen, loaded_modules: bool = True) -> dict:
        """{"files": [[path, size, mtime_ns, ctime_ns, sha1 or None]] (size -1: absent),
        "dirs": [[path, listing sha1]]}: the inputs of the run (what it read, less what it wrote,
        and every loaded module's file, unless `loaded_modules` is False). Raises Unrecordable
        when an input was modified during the run, or just before it."""
        paths = set(seen.read) - seen.written
        loaded = set()
        for m in list(sys.modules.values()) if loaded_modules else []:
            f = getattr(m, "__file__", None)
            if isinstance(f, str):
                loaded.add(os.path.abspath(f))
        paths |= loaded - seen.written
        roots = _installed_roots()
        recent = self.start_ns - MODIFIED_MARGIN_NS
        files, dirs = [], []
        for p in sorted(paths):
            if _skipped(p):
                continue
            try:
                st = os.stat(p)
            except FileNotFoundError:
                if p in seen.read:  # tried and missing: its absence is an input
                    files.append([p, -1, 0, 0, None])
                continue
            except OSError:
                continue
            if not os.path.isfile(p):
                continue
            if st.st_mtime_ns >= recent:
                raise Unrecordable(f"{p} was modified less than "
                                   f"{MODIFIED_MARGIN_NS // 10**9} s before the run or during it")
            digest = None
            if not os.path.realpath(p).startswith(roots) and st.st_size <= _HASH_LIMIT:
                digest = _sha1_file(p)
            files.append([p, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest])
        for d in sorted(seen.listed):
            if _skipped(os.path.join(d, "")):
                continue
            try:
                st = os.stat(d)
                if st.st_mtime_ns >= recent:
                    continue  # a folder the run itself changed: its product
                dirs.append([d, _listing(d)])
            except OSError:
                continue
        return {"files": files, "dirs": dirs}


def store(entry_key: str, records: dict, graphs: list, calls: list, torch_version: str) -> None:
    """Keeps a model entry: the run's records, the captured graphs' IR (JSON text) and the
    order they were called in (indices into `graphs`)."""
    from ._core import core

    entry = {"version": VERSION, **records, "graphs": graphs, "calls": calls,
             "torch_version": torch_version}
    core.cache_store(KIND, entry_key, json.dumps(entry).encode())


def changed(entry: dict) -> Optional[str]:
    """The first record of `entry` that no longer holds (a file or folder, named), else None."""
    for path, size, mtime_ns, ctime_ns, digest in entry["files"]:
        try:
            st = os.stat(path)
        except OSError:
            if size == -1:
                continue
            return path
        if size == -1 or (st.st_size, st.st_mtime_ns, st.st_ctime_ns) != (size, mtime_ns,
                                                                           ctime_ns):
            return path
        if digest is not None:
            try:
                if _sha1_file(path) != digest:
                    return path
            except OSError:
                return path
    for path, listing in entry["dirs"]:
        try:
            if _listing(path) != listing:
                return path
        except OSError:
            return path
    return None


def _well_formed(entry) -> bool:
    def rows(x, n):
        return isinstance(x, list) and all(isinstance(r, list) and len(r) == n for r in x)

    return (isinstance(entry, dict) and entry.get("version") == VERSION
            and rows(entry.get("files"), 5) and rows(entry.get("dirs"), 2)
            and all(isinstance(f[0], str) and all(isinstance(v, int) for v in f[1:4])
                    and (f[4] is None or isinstance(f[4], str)) for f in entry["files"])
            and all(isinstance(d[0], str) and isinstance(d[1], str) for d in entry["dirs"])
            and isinstance(entry.get("graphs"), list) and len(entry["graphs"]) > 0
            and all(isinstance(g, str) for g in entry["graphs"])
            and isinstance(entry.get("calls"), list)
            and all(type(c) is int and 0 <= c < len(entry["graphs"]) for c in entry["calls"])
            and isinstance(entry.get("torch_version"), str))


def lookup(entry_key: str) -> Optional[dict]:
    """The model entry of `entry_key` whose records all still hold, else None (none stored,
    unreadable, damaged, another version, or something changed)."""
    from ._core import core

    data = core.cache_load(KIND, entry_key)
    if data is None:
        return None
    try:
        entry = json.loads(data)
    except ValueError:
        return None  # a damaged entry: the model runs and stores a new one
    if not _well_formed(entry):
        return None
    return entry if changed(entry) is None else None
