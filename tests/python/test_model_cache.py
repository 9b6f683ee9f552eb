"""Model entries of the compile cache (tools/python/spyre_sim/model_cache.py): a timing-only
rerun of an unchanged model file does not run it (no model build, no Dynamo) and simulates the
same; a change of the model file, of a module it imports, of a file it reads, of the
environment or of torch's installed files runs it again; a change of configuration still skips
the model but compiles again."""

import json
import os
import pathlib
import sys

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


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SPYRE_SIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPYRE_SIM_CACHE_MAX_MB", raising=False)
    d = tmp_path / "model"
    d.mkdir()
    (d / "model.py").write_text(MODEL)
    (d / "helper.py").write_text("HIDDEN = 64\n")
    (d / "shape.json").write_text('{"width": 32}\n')
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
    (folder / "helper.py").write_text("HIDDEN = 128\n")
    wider, prov, _ = _run(cli, folder)
    assert prov["model_cache"] == "stored" and _runs(folder) == 2
    assert wider["cycles"] != first["cycles"]
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 2

    # A data file the model reads, with its size and time kept: the contents decide.
    shape = folder / "shape.json"
    st = shape.stat()
    shape.write_text('{"width": 48}\n')
    os.utime(shape, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert shape.stat().st_size == st.st_size
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 3

    # The model file itself, a comment only.
    with open(folder / "model.py", "a") as f:
        f.write("# another line\n")
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
    assert recorded[0][3] is None  # an installed file: checked by its size and time
    # A reinstalled torch has files of another time: as if this one were.
    recorded[0][2] += 1
    path.write_bytes(json.dumps(entry).encode())
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 2


def test_a_damaged_entry_runs_the_model_and_is_replaced(cli, folder):
    _run(cli, folder)
    _entry(folder).write_bytes(b"{not json")
    assert _run(cli, folder)[1]["model_cache"] == "stored" and _runs(folder) == 2
    assert _run(cli, folder)[1]["model_cache"] == "hit" and _runs(folder) == 2


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
    read, written, late = tmp_path / "read.txt", tmp_path / "written.txt", tmp_path / "late.txt"
    read.write_text("in")
    late.write_text("old")
    rec = model_cache.Recording()
    rec.start()
    try:
        read.read_text()
        written.write_text("out")
        late.write_text("new")  # rewritten by the run, then read: a product of the run
        late.read_text()
        os.close(os.open(read, os.O_RDONLY))
    finally:
        opened = rec.stop()
    assert str(read) in opened and str(late) in opened and str(written) not in opened
    files = {f[0]: f for f in rec.files(opened)}
    assert str(read) in files and str(late) not in files
    assert files[str(read)][3] is not None  # outside the installation: its SHA-1 is kept
    assert model_cache.changed_file(list(files.values())) is None
    read.write_text("IN")
    assert model_cache.changed_file(list(files.values())) == str(read)
