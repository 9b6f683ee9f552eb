"""Architecture sweeps: `spyre-sim sweep SPEC.yaml` and `spyre_sim.sweep(...)`.

spec.py reads and checks a spec; run.py captures, runs the points (batch.py: worker processes
or Ray) and writes the results folder; plot.py draws; cli.py is the command line."""

from .run import SweepResult


def sweep(spec, out=None, jobs=None, set=(), fresh=False, ray=None, dataframe=False,
          progress=False, plots=True):
    """Runs the sweep of the spec file `spec` (see spec.py for the format) and returns its rows,
    one dict per (point, model) in spec order, or a pandas DataFrame with `dataframe=True`.
    out: results folder (default spyre-sim-out/sweep/<spec name>); jobs: worker processes
    (default: the cores); set: ["key=value", ...] applied at every point; fresh: start over
    instead of resuming; ray: a Ray address or "local". Raises SpecError on a bad spec."""
    from .run import run

    res = run(spec, out, jobs, set, fresh, ray, progress, plots)
    return res.dataframe() if dataframe else res.rows


__all__ = ["sweep", "SweepResult"]
