"""Loads the C++ core: the embedded module inside the spyre-sim CLI, else the extension
module the build puts in build/python (on the path through the .venv's spyre_sim.pth)."""

try:
    import spyre_sim_core as core
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "spyre_sim_core (the C++ core) is not built; run `make build` in the spyre-sim checkout"
    ) from e

SpyreError = core.SpyreError
