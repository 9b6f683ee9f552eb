"""spyre-sim: a cycle-level simulator of a Spyre-class AI accelerator with an Inductor compiler.

    import torch, spyre_sim
    result = spyre_sim.run(model, (x,))            # compile, simulate, compare with eager
    y = torch.compile(model, backend="spyre_sim")(x)
    spyre_sim.last_result().cycles

The C++ core (compiler, SystemC chip model, traces) is the `spyre_sim_core` module.
"""

from .api import last_result, run
from .backend import spyre_sim_backend
from .result import Result

__all__ = ["run", "last_result", "Result", "spyre_sim_backend"]
__version__ = "0.1.0"
