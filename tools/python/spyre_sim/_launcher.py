"""The `spyre-sim` command of an installed wheel: runs the C++ program shipped inside the package
(spyre_sim/_bin/spyre-sim), telling it which Python environment to embed for model files and the
Python subcommands (SPYRE_SIM_VENV: this interpreter's prefix). A development checkout links
.venv/bin/spyre-sim to build/tools/spyre-sim instead (Makefile) and never comes here."""

import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "spyre-sim")
    if not os.path.exists(exe):
        sys.exit(f"spyre-sim: {exe} is missing: this spyre_sim was not installed from a wheel "
                 "(in a checkout, run `make build` and use .venv/bin/spyre-sim)")
    env = dict(os.environ)
    env.setdefault("SPYRE_SIM_VENV", sys.prefix)
    os.execve(exe, [exe, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
