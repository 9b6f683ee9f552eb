"""spyre-sim: a cycle-level simulator of a Spyre-class AI accelerator with an Inductor compiler.

    import torch, spyre_sim
    result = spyre_sim.run(model, (x,))            # compile, simulate, compare with eager
    y = torch.compile(model, backend="spyre_sim")(x)
    spyre_sim.last_result().cycles

The C++ core (compiler, SystemC chip model, traces) is the `spyre_sim_core` module.
"""

# Imported on first use, so that torch-free parts (spyre_sim.trace, run by `spyre-sim trace`)
# do not pay for `import torch`.
_LAZY = {"run": "api", "last_result": "api", "Result": "result", "spyre_sim_backend": "backend"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'spyre_sim' has no attribute {name!r}")


__all__ = ["run", "last_result", "Result", "spyre_sim_backend"]
__version__ = "0.1.0"
