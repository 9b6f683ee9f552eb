"""spyre-sim: a cycle-level simulator of a Spyre-class AI accelerator with an Inductor compiler.

    import torch, spyre_sim
    result = spyre_sim.run(model, (x,))            # compile, simulate, compare with eager
    y = torch.compile(model, backend="spyre_sim")(x)
    spyre_sim.last_result().cycles
    rows = spyre_sim.sweep("examples/sweeps/gpt2_block.yaml", jobs=2)   # architecture sweep
    spyre_sim.regress().exit_code                   # the regression suite against its baseline

The C++ core (compiler, SystemC chip model, traces) is the `spyre_sim_core` module.
"""

# Imported on first use, so that torch-free parts (spyre_sim.trace, regress, sweeps of IR files)
# do not pay for `import torch`. name -> (module, attribute)
_LAZY = {"run": ("api", "run"), "last_result": ("api", "last_result"),
         "Result": ("result", "Result"), "spyre_sim_backend": ("backend", "spyre_sim_backend"),
         "sweep": ("sweeps", "sweep"), "regress": ("regression", "run"),
         "SpecError": ("specfile", "SpecError"), "version": ("provenance", "version_line")}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(f"module 'spyre_sim' has no attribute {name!r}")


__all__ = ["run", "last_result", "Result", "spyre_sim_backend", "sweep", "regress", "SpecError",
           "version"]
__version__ = "0.1.0"
