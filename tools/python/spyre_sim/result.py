"""The result of a simulated run."""

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class Result:
    outputs: Any                      # what the model returned, computed on the simulator
    summary: dict                     # the CLI's JSON: cycles, kernels, utilisation, dram, stats
    reports: list = field(default_factory=list)  # compile report per subgraph
    trace_path: Optional[str] = None
    # per compiled subgraph: its program came from the program cache (no compile ran)
    from_cache: list = field(default_factory=list)
    graph_irs: list = field(default_factory=list)  # per compiled subgraph: its IR (JSON text)
    calls: list = field(default_factory=list)  # per call, in order: the subgraph's index

    @property
    def cycles(self) -> int:
        return int(self.summary["cycles"])

    @property
    def device_time_us(self) -> float:
        return float(self.summary["device_time_us"])

    @property
    def stats(self) -> dict:
        return self.summary["stats"]

    @property
    def kernels(self) -> list:
        return self.summary["kernels"]

    @property
    def outputs_match(self) -> Optional[bool]:
        return self.summary.get("outputs_match")

    def __str__(self) -> str:
        import json

        from ._core import core

        return core.format_summary(json.dumps(self.summary))
