"""`spyre-sim script FILE.py [ARGS]`: runs a Python file in the CLI's embedded interpreter, as
`python FILE.py ARGS` would: `__name__` is "__main__", `sys.argv` is [FILE.py, ARGS...], and
`import spyre_sim` gives the same API as in the project's .venv (run, sweep, regress, the
torch backend). An exception prints its traceback and exits 1; `sys.exit(n)` exits n.

Sweeps and regressions start worker processes that import the script again (multiprocessing's
spawn, as under plain Python), so a script that runs them keeps its work under
`if __name__ == "__main__":`.
"""

import os
import runpy
import sys
import traceback


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0].strip("`"))
        print("usage: spyre-sim script FILE.py [ARGS...]")
        return 0 if argv else 2
    path = argv[0]
    if not os.path.isfile(path):
        print(f"spyre-sim script: error: {path}: no such file", file=sys.stderr)
        return 2
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python FILE.py` does
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException as e:  # the user's error: show it as Python would, from their file on
        tb, mine = e.__traceback__, os.path.abspath(path)
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != mine:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout.flush()
        sys.stderr.flush()
    return 0
