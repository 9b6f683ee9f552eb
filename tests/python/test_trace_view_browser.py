"""The `spyre-sim trace view` page in a real headless Chromium (Debian chromium +
chromium-driver, driven by selenium): it loads without console errors, its timeline holds the
run's tracks, and what it draws is not blank. Missing Chromium fails (it is in APT_PACKAGES).

SPYRE_SIM_SCREENSHOT=FILE keeps the screenshot for a look."""

import io
import json
import os
import shutil
import time

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, run_cli

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for exe in (CHROMIUM, DRIVER):
        if not shutil.which(exe):
            pytest.fail(f"{exe} is missing: install the Debian packages chromium and "
                        "chromium-driver (`make deps`)")
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
              "--window-size=1400,1400", "--enable-unsafe-swiftshader"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=o)


def test_view_page_in_chromium(tmp_path):
    out = tmp_path / "run"
    r = run_cli("run", ROOT / "tests" / "data" / "ir" / "mlp_block.json", "--arch", "tiny",
                "--out", out, "--trace", out / "trace.json", "--trace-detail", "full")
    assert r.returncode == 0, r.stderr
    page = tmp_path / "view.html"
    # A small detail budget, so that the page has binned tracks as well as single spans.
    r = run_cli("trace", "view", out / "trace.json", "-o", page, "--report", out / "report.json",
                "--max-detail", "1500")
    assert r.returncode == 0, r.stderr
    assert "tracks binned" in r.stdout
    expected = json.loads(run_cli("trace", "report", out / "trace.json", "--json").stdout)

    d = _browser()
    try:
        d.get(page.as_uri())
        deadline = time.monotonic() + 60
        while not d.execute_script(
                "return !!(window.Bokeh && Bokeh.index && Object.keys(Bokeh.index).length)"):
            assert time.monotonic() < deadline, "the bokeh plot did not render within 60 s"
            time.sleep(0.2)
        time.sleep(1.0)  # let the canvas paint
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors
        fetched = d.execute_script("return performance.getEntriesByType('resource')"
                                   ".map(e => e.name)")
        assert fetched == [], fetched  # self-contained: the page loads nothing

        # The timeline's rows (a categorical y range) are the trace's tracks.
        factors = d.execute_script(
            "for (const m of Bokeh.documents[0].all_models)"
            "  if (m.factors && m.factors.length > 10) return m.factors; return null")
        for want in ("spyre / barrier", "spyre.core_0 / pt0", "spyre.core_3 / dma_in",
                     "spyre.core_1 / sfp1", "spyre.dram / ch0"):
            assert want in factors
        assert len(factors) == expected["tracks"]
        # The report's tables are in the page's DOM.
        tracks_table = d.execute_script(
            "return [...document.querySelectorAll('table.tracks td:first-child')]"
            ".map(e => e.textContent)")
        assert sorted(tracks_table) == sorted(factors)
        kernels = d.execute_script(
            "return [...document.querySelectorAll('table.kernels td:first-child')]"
            ".map(e => e.textContent)")
        assert kernels == [k["name"] for k in expected["kernels"]]

        top = d.execute_script("return document.querySelector('p.key').getBoundingClientRect()"
                               ".bottom * window.devicePixelRatio")
        png = d.get_screenshot_as_png()
    finally:
        d.quit()
    if os.environ.get("SPYRE_SIM_SCREENSHOT"):
        with open(os.environ["SPYRE_SIM_SCREENSHOT"], "wb") as f:
            f.write(png)
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64)
    plot = img[int(top) + 10:]  # below the title and colour key: the timeline
    assert plot.shape[0] > 300
    # Drawn spans: many pixels that are neither white background nor grey text, and variance.
    r_, g_, b_ = plot[..., 0], plot[..., 1], plot[..., 2]
    blue = (b_ > r_ + 40) & (b_ > 120)  # compute spans
    orange = (r_ > b_ + 80) & (r_ > 180)  # memory spans
    assert blue.mean() > 0.005 and orange.mean() > 0.01, (blue.mean(), orange.mean())
    assert plot.std() > 20
