"""`ci-eval history site`: the dashboard page from a recorded history, rendered in a real
headless chromium (Debian's): it draws its three charts and logs nothing to the console (a
console line is a script error, a blocked fetch or a CSP violation); recorded strings stay
text. The history is written by scripts/demo_history.py through ci-eval's own history code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_eval.results import history

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="LOUD SKIP: chromium is not installed (apt-get install chromium; "
    ".ci/run installs it): the dashboard is not checked in a browser")
HOSTILE = '</script><img src=x onerror="document.title=1">&amp;'


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A repo root with an archived task, a 12-run history (one summary with a hostile agent
    name) and the page `history site` wrote from it."""
    root = tmp_path_factory.mktemp("site")
    hist = root / "history"
    made = subprocess.run([sys.executable, str(REPO / "scripts" / "demo_history.py"), str(hist),
                           "--runs", "12", "--tasks", "6"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert made.returncode == 0, made.stderr
    last = history.load_history(hist)[-1]
    hostile = history.RunSummary(date="2026-12-01", recorded_at="2026-12-01T10:00:00Z",
                                 commit=None, agent=HOSTILE, ci_eval_version="0",
                                 tasks=last.tasks)
    history.write_summary(hist, hostile)
    archived = root / "archive" / "task-099-old-thing"
    archived.mkdir(parents=True)
    (root / "archive" / "ARCHIVE-LOG.md").write_text(
        "# Archived tasks\n\n2026-11-02 — Archived task-099-old-thing (10/10 pass, 8 months old)\n")
    out = root / "site"
    return root, hist, out


def run_site(cli, root, hist, out, *extra):
    return cli("history", "site", "--root", root, "--history", hist, "--out", out, *extra)


def chromium_dom(page: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran, and every console line chromium logged."""
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def test_site_writes_one_offline_page(site, cli):
    root, hist, out = site
    done = run_site(cli, root, hist, out, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"path": str(out / "index.html"), "runs": 13, "tasks": 6,
                      "flaky": report["flaky"], "archived": 1} and report["flaky"] >= 1
    page = (out / "index.html").read_text()
    assert "<script src" not in page and "<link" not in page  # everything inline
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert HOSTILE not in page and "\\u003c/script\\u003e\\u003cimg" in page  # escaped JSON
    assert "uPlot" in page and "task-099-old-thing" in page


@needs_chromium
def test_dashboard_renders_in_chromium_without_console_lines(site, cli):
    root, hist, out = site
    assert run_site(cli, root, hist, out).returncode == 0
    dom, console = chromium_dom(out / "index.html")
    assert console == []
    assert 'data-rendered="3"' in dom  # the three uPlot canvases were drawn
    assert "task-001-parse-dates" in dom and "task-099-old-thing" in dom
    assert "Archived task-099-old-thing (10/10 pass, 8 months old)" in dom
    assert "pass^k" in dom and "<td>" in dom
    # the hostile agent name is a table cell's text, no element
    assert "&lt;/script&gt;&lt;img src=x onerror=" in dom and "<img" not in dom


@needs_chromium
def test_the_console_check_sees_a_script_error(site, cli, tmp_path):
    """The check above can fail: the same page with one broken statement logs a console line."""
    root, hist, out = site
    assert run_site(cli, root, hist, out).returncode == 0
    broken = tmp_path / "broken.html"
    page = (out / "index.html").read_text()
    broken.write_text(page.replace('"use strict";', '"use strict"; notDefinedAnywhere();', 1))
    dom, console = chromium_dom(broken)
    assert any("notDefinedAnywhere" in line for line in console)
    assert "data-rendered=" not in dom


def test_an_empty_history_is_a_page_saying_so(tmp_path, cli):
    (tmp_path / "h").mkdir()
    done = run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "0 run(s), 0 task(s)" in done.stdout
    assert "No run summaries recorded yet." in (tmp_path / "out" / "index.html").read_text()


def test_bad_input(tmp_path, cli, assert_bad_input):
    assert_bad_input(run_site(cli, tmp_path, tmp_path / "nowhere", tmp_path / "out"),
                     "history folder not found", "--history")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "notes.txt").write_text("hello")
    assert_bad_input(run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out"),
                     "notes.txt", "not a run summary")
    (tmp_path / "h" / "notes.txt").unlink()
    (tmp_path / "file").write_text("x")
    assert_bad_input(run_site(cli, tmp_path, tmp_path / "h", tmp_path / "file"), "--out")
    assert not (tmp_path / "out").exists()


def test_no_network_even_for_a_file_url():
    """The page's policy leaves nothing to fetch: every source but inline script and style
    is 'none' (a regression here would let a recorded string pull a remote resource)."""
    from ci_eval.render.site import CSP

    assert CSP.startswith("default-src 'none';") and "http" not in CSP
    assert os.path.isfile(REPO / "ci_eval" / "render" / "vendor" / "uplot" / "LICENSE")
