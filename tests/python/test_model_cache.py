"""Model entries of the compile cache (tools/python/spyre_sim/model_cache.py): a timing-only
rerun of an unchanged model file does not run it (no model build, no Dynamo) and simulates the
same; a change of the model file, of a module it imports, of a file it reads, of the
environment or of torch's installed files runs it again; a change of configuration still skips
the model but compiles again."""

import json
import os
import pathlib
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "python"))
from spyre_sim import model_cache  # noqa: E402

MODEL = """\
import json, pathlib, sys
import torch
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import helper
with open(HERE / "runs.log", "a") as log:  # written, not read: not one of the run's inputs
    log.write("run\\n")
width = json.loads((HERE / "shape.json").read_text())["width"]
model = torch.nn.Sequential(torch.nn.Linear(width, helper.HIDDEN), torch.nn.ReLU())
example_inputs = (torch.randn(16, width),)
"""


def _write(path, text):
    """Writes `text` dated a minute back: an input modified within
    model_cache.MODIFIED_MARGIN_NS of a run's start keeps the run from storing an entry."""
    path.write_text(text)
    old = time.time_ns() - 60_000_000_000
    os.utime(path, ns=(old, old))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SPYRE_SIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPYRE_SIM_CACHE_MAX_MB", raising=False)
    # Inductor's own cache of this test alone: a module another test's process writes there
    # while this run reads it would rightly keep the run from storing an entry.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    d = tmp_path / "model"
    d.mkdir()
    _write(d / "model.py", MODEL)
    _write(d / "helper.py", "HIDDEN = 64\n")
    _write(d / "shape.json", '{"width": 32}\n')
    return d


def _run(cli, folder, *extra):
    """(summary, provenance, stdout) of a timing-only run of the model, counting its runs."""
    out = folder.parent / "out"
    r = cli("run", folder / "model.py", "--timing-only", "--no-trace", "--out", out, *extra,
            cwd=folder.parent)
    assert r.returncode == 0, (r.stdout, r.stderr)
    prov = json.loads((out / "provenance.json").read_text())
    return json.loads((out / "summary.json").read_text()), prov, r.stdout


def _runs(folder):
    return len((folder / "runs.log").read_text().splitlines())


def test_a_rerun_skips_the_model_until_what_it_read_changes(cli, folder, monkeypatch):
    first, prov, out = _run(cli, folder)
    assert prov["model_cache"] == "stored" and "model cache       stored" in out
    assert _runs(folder) == 1
    again, prov, out = _run(cli, folder)
    assert prov["model_cache"] == "hit" and "model cache       hit" in out
    assert prov["program_cache"]["hits"] == 1
    assert _runs(folder) == 1, "a hit does not run the model file"
    assert {k: v for k, v in again.items() if k != "out"} == \
        {k: v for k, v in first.items() if k != "out"}
    assert first["kernels"] and first["cycles"] > 0

    # A module the model imports: another width of its Linear, so other cycles.
    _write(folder / "helper.py", "HIDDEN = 128\n")
    wider, prov, _ = _run(cli, folder)
    assert prov["model_cache"] == "stored" and _runs(folder) == 2
    assert wider["cycles"] != first["cycles"]
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 2

    # A data file the model reads, with its size and time kept: its change time and contents
    # decide.
    shape = folder / "shape.json"
    st = shape.stat()
    shape.write_text('{"width": 48}\n')
    os.utime(shape, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert shape.stat().st_size == st.st_size
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 3

    # The model file itself, a comment only.
    _write(folder / "model.py", MODEL + "# another line\n")
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 4

    # The environment.
    monkeypatch.setenv("TORCHINDUCTOR_SOME_SETTING", "1")
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 5
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 5

    # Another configuration: the model is not run, its graph is compiled for the new chip.
    _, prov, out = _run(cli, folder, "--set", "chip.cores=8")
    assert prov["model_cache"] == "hit" and prov["program_cache"]["hits"] == 0
    assert _runs(folder) == 5


def _entry(folder):
    entries = list((folder.parent / "cache" / model_cache.KIND).glob("*.entry"))
    assert len(entries) == 1, entries
    return entries[0]


def test_another_torch_install_runs_the_model_again(cli, folder):
    import torch

    _run(cli, folder)
    path = _entry(folder)
    entry = json.loads(path.read_bytes())
    version_py = str(pathlib.Path(torch.__file__).parent / "version.py")
    recorded = [f for f in entry["files"] if f[0] == version_py]
    assert recorded, "torch's files are among the recorded ones"
    assert recorded[0][4] is None  # an installed file: checked by its size and times
    # A reinstalled torch has files of another time: as if this one were.
    recorded[0][2] += 1
    path.write_bytes(json.dumps(entry).encode())
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 2


def test_a_damaged_entry_runs_the_model_and_is_replaced(cli, folder):
    _run(cli, folder)
    good = _entry(folder).read_bytes()
    entry = json.loads(good)
    damaged = [b"{not json", json.dumps({**entry, "files": [["x", 1]]}).encode(),
               json.dumps({**entry, "calls": [0.5]}).encode(),
               json.dumps({k: v for k, v in entry.items() if k != "torch_version"}).encode(),
               json.dumps({**entry, "graphs": ['{"graph": "g", "nodes": 3}']}).encode(),
               json.dumps({**entry, "graphs": ["not json"]}).encode()]
    for n, bad in enumerate(damaged):
        _entry(folder).write_bytes(bad)
        assert _run(cli, folder)[1]["model_cache"] == "stored", bad[:60]
        assert _runs(folder) == n + 2
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == len(damaged) + 1


def test_what_changes_while_the_model_runs_keeps_it_from_being_stored(cli, folder):
    # Another process changes a file the model read (a user saving it in an editor): what the
    # run read cannot be told from what is there now.
    _write(folder / "model.py", MODEL.replace(
        "width = json.loads", "import subprocess\n"
        "subprocess.run(['touch', str(HERE / 'shape.json')], check=True)\nwidth = json.loads"))
    _, prov, out = _run(cli, folder)
    assert prov["model_cache"].startswith("not stored: ") and "shape.json" in prov["model_cache"]
    assert "model cache       not stored" in out
    assert _run(cli, folder)[1]["model_cache"].startswith("not stored") and _runs(folder) == 2


def test_a_file_that_appears_or_a_folder_that_changes_runs_the_model_again(cli, folder):
    _write(folder / "model.py", MODEL + """
import os
if os.path.isfile(HERE / "extra.json"):
    pass
try:
    open(HERE / "optional.json").close()
except FileNotFoundError:
    pass
configs = sorted(os.listdir(HERE / "configs"))
""")
    (folder / "configs").mkdir()
    _write(folder / "configs" / "a.json", "{}")
    old = time.time_ns() - 60_000_000_000
    os.utime(folder / "configs", ns=(old, old))
    assert _run(cli, folder)[1]["model_cache"] == "stored"
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 1
    _write(folder / "optional.json", "{}")  # tried and missing before: now there
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 2
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 2
    _write(folder / "configs" / "b.json", "{}")  # a folder it listed gains a file
    os.utime(folder / "configs", ns=(old, old))
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 3


def test_several_graphs_and_calls_replay_as_they_ran(cli, folder):
    # A graph break splits the model in two graphs; the second is called twice.
    _write(folder / "model.py", """\
import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(32, 64), torch.nn.Linear(64, 64)
    def forward(self, x):
        y = torch.relu(self.a(x))
        torch._dynamo.graph_break()
        return self.b(torch.tanh(self.b(y)))
model = M()
example_inputs = (torch.randn(16, 32),)
""")
    out = folder.parent / "out"
    runs = []
    for _ in range(2):
        r = cli("run", folder / "model.py", "--timing-only", "--out", out, cwd=folder.parent)
        assert r.returncode == 0, r.stderr
        runs.append({p.name: p.read_bytes() for p in out.iterdir()
                     if p.suffix in (".json", ".pftrace") and p.name != "provenance.json"})
        runs[-1]["prov"] = json.loads((out / "provenance.json").read_text())["model_cache"]
    assert [r.pop("prov") for r in runs] == ["stored", "hit"]
    assert sorted(runs[0]) == sorted(runs[1])
    assert len([n for n in runs[0] if n.endswith(".pftrace")]) >= 2, sorted(runs[0])
    for name in runs[0]:
        assert runs[0][name] == runs[1][name], name


def test_functional_runs_and_no_cache_keep_no_model_entry(cli, folder):
    out = folder.parent / "out"
    r = cli("run", folder / "model.py", "--no-trace", "--out", out, cwd=folder.parent)
    assert r.returncode == 0, r.stderr
    assert "model_cache" not in json.loads((out / "provenance.json").read_text())
    r = cli("run", folder / "model.py", "--timing-only", "--no-trace", "--no-cache", "--out", out,
            cwd=folder.parent)
    assert r.returncode == 0, r.stderr
    assert not (folder.parent / "cache" / model_cache.KIND).exists()


def test_the_recording_keeps_what_was_read_not_what_was_written(tmp_path):
    read, written, made = tmp_path / "read.txt", tmp_path / "written.txt", tmp_path / "made.txt"
    missing = tmp_path / "missing.txt"
    _write(read, "in")
    rec = model_cache.Recording()
    rec.start()
    try:
        read.read_text()
        os.close(os.open(read, os.O_RDONLY))
        written.write_text("out")
        made.write_text("new")  # written by the run, then read: a product of the run
        made.read_text()
        with pytest.raises(FileNotFoundError):
            missing.read_text()
    finally:
        seen = rec.stop()
    assert {str(read), str(made), str(missing)} <= seen.read
    assert {str(written), str(made)} <= seen.written and str(written) not in seen.read
    # the pytest process's own modules left out: another test may have just written one
    entry = {**rec.records(seen, loaded_modules=False), "graphs": ["{}"], "calls": [0],
             "torch_version": "x",
             "version": model_cache.VERSION}
    files = {f[0]: f for f in entry["files"]}
    assert str(read) in files and str(made) not in files and str(written) not in files
    assert files[str(read)][4] is not None  # outside the installation: its SHA-1 is kept
    assert files[str(missing)][1] == -1  # tried and missing: recorded as absent
    assert model_cache.changed(entry) is None
    _write(missing, "now")
    assert model_cache.changed(entry) == str(missing)
    missing.unlink()
    st = read.stat()
    read.write_text("IN")
    os.utime(read, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert model_cache.changed(entry) == str(read)  # same size and time: the change time


def test_an_input_modified_just_before_or_during_the_run_is_unrecordable(tmp_path):
    fresh = tmp_path / "fresh.txt"
    fresh.write_text("x")  # now: within the margin before the run's start
    rec = model_cache.Recording()
    rec.start()
    try:
        fresh.read_text()
    finally:
        seen = rec.stop()
    with pytest.raises(model_cache.Unrecordable, match="fresh.txt"):
        rec.records(seen, loaded_modules=False)
