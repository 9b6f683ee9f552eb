"""Which settings compiled graphs use, and where their runs are recorded.

`spyre_sim.run` pushes a Session for its duration; a bare `torch.compile(m, backend="spyre_sim")`
uses the default one (the built-in "spyre" configuration, no trace)."""

import os
from typing import List, Optional


class Session:
    def __init__(self, arch: Optional[str] = None, sets=None, trace: Optional[str] = None,
                 timing_only: bool = False, trace_filter: Optional[str] = None,
                 save_ir: Optional[str] = None, reuse_timing: bool = False,
                 trace_detail: str = "summary", cache: bool = True, keep_graphs: bool = False):
        self.arch = arch or "spyre"
        self.sets = [str(s) for s in (sets or [])]
        self.trace = trace
        self.timing_only = timing_only
        self.trace_filter = trace_filter or ""
        self.trace_detail = trace_detail  # "summary" | "full" (spyre-sim run --trace-detail)
        self.save_ir = save_ir  # folder for each captured graph's IR JSON (None: not saved)
        self.cache = cache  # compiled programs through the program cache ($SPYRE_SIM_CACHE)
        # timing-only: a compiled graph's repeated calls reuse its first simulated run (exact:
        # a timing-only run reads no values); its summary says "reused"
        self.reuse_timing = reuse_timing
        self.runs: List[dict] = []      # summary per simulated subgraph call
        self.reports: list = []  # compile report per compiled subgraph (a replay's: JSON text)
        self.sim_seconds: List[float] = []  # wall time of each run (simulation and copies)
        self.from_cache: List[bool] = []  # per compiled subgraph: its program came from the cache
        # With keep_graphs (the CLI's model cache), per compiled subgraph its IR (JSON text),
        # and per call, in order, the subgraph called (its index); else both stay empty.
        self.keep_graphs = keep_graphs
        self.graph_irs: List[str] = []
        self.calls: List[int] = []

    def next_trace_path(self) -> str:
        if not self.trace:
            return ""
        if not self.runs:
            return self.trace
        root, ext = os.path.splitext(self.trace)
        return f"{root}.{len(self.runs)}{ext or '.json'}"


_stack: List[Session] = [Session()]


def current() -> Session:
    return _stack[-1]


class active:
    """Context manager: make `session` the one compiled graphs use."""

    def __init__(self, session: Session):
        self.session = session

    def __enter__(self):
        _stack.append(self.session)
        return self.session

    def __exit__(self, *exc):
        _stack.pop()
        return False
