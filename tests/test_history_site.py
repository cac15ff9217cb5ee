"""`ci-eval history site`: the dashboard page from a recorded history, rendered in a real
headless chromium (Debian's): it lays out what got worse (the drifted task first, the grid, the
cost trend of the task that got dearer, the two flaky tasks and only them), draws its chart and
logs nothing to the console (a console line is a script error, a blocked fetch or a CSP
violation); recorded strings stay text; empty states say why. The history and its baseline are
written by scripts/demo_history.py through ci-eval's own history and baseline code."""

from __future__ import annotations

import json
import os
import re
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
    """A repo root with an archived task, a baseline.json and a 12-run history (one summary
    with a hostile agent name) and the page `history site` wrote from it."""
    root = tmp_path_factory.mktemp("site")
    hist = root / "history"
    made = subprocess.run([sys.executable, str(REPO / "scripts" / "demo_history.py"), str(hist),
                           "--runs", "12", "--tasks", "6", "--baseline", str(root / "baseline.json"),
                           "--baseline-runs", "4"], capture_output=True, text=True,
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
    assert report == {"path": str(out / "index.html"), "runs": 13, "tasks": 6, "worse": 1,
                      "drifted": 1, "flaky": 2, "archived": 1, "baseline": str(root / "baseline.json")}
    page = (out / "index.html").read_text()
    assert "<script src" not in page and "<link" not in page  # everything inline
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert HOSTILE not in page and "\\u003c/script\\u003e\\u003cimg" in page  # escaped JSON
    assert "uPlot" in page and "task-099-old-thing" in page


def section(dom: str, heading: str) -> str:
    """The DOM from an <h2> to the next one."""
    return dom.split(f"<h2>{heading}", 1)[1].split("<h2>", 1)[0]


@needs_chromium
def test_dashboard_renders_in_chromium_without_console_lines(site, cli):
    root, hist, out = site
    assert run_site(cli, root, hist, out).returncode == 0
    dom, console = chromium_dom(out / "index.html")
    assert console == []
    assert 'data-rendered="1"' in dom  # the suite chart's uPlot canvas was drawn
    # the drifted task (demo: task-002, down from the middle of the window) leads everything
    worse = section(dom, "What got worse since the baseline")
    assert worse.count("<tr>") == 2 and "task-002-fix-off-by-one" in worse and "worse" in worse
    grid = section(dom, "Every task in every run")
    rows = grid.split('<td class="name">')[1:]
    assert len(rows) == 6 and rows[0].startswith("task-002-fix-off-by-one")
    assert grid.count('class="since"') + grid.count(' since"') >= 5  # the baseline's edge per row
    assert ">B<" in grid and ">A<" in grid  # baseline recorded; the hostile run's agent differs
    assert "!" in rows[0]  # a run of the drifted task below its own rate
    assert rows[0].count("drifted") >= 2  # main below its baseline in those runs (demo: 4)
    drift = section(dom, "Main against its baseline (drift)")
    drift_rows = drift.split("<tr>")[2:]
    assert drift_rows[0].startswith("<td>task-002-fix-off-by-one</td>"), drift
    assert drift.count("<circle") >= 2 and "<path" in drift  # the drifted runs' red dots
    # the task that got 3x dearer leads the cost table
    cost = section(dom, "Cost per agent run, per task")
    assert cost.split("<td>", 1)[1].startswith("task-005-csv-quoting") and "×" in cost
    flaky = section(dom, "Flaky tasks")
    assert "task-003-rename-api" in flaky and "task-004-add-retry" in flaky
    assert flaky.count("<tr>") == 3  # the two flaky demo tasks and the header: nothing else
    assert "Archived task-099-old-thing (10/10 pass, 8 months old)" in dom
    # the hostile agent name is text (a cell, a title), never an element (attribute values are
    # blanked first: whether a serializer escapes < inside them varies between versions)
    assert "&lt;/script&gt;&lt;img src=x onerror=" in dom
    assert "<img" not in re.sub(r'="[^"]*"', '=""', dom)


@needs_chromium
def test_empty_states_say_why(tmp_path, cli):
    """A history of runs that recorded no cost and no wall (the noop and reference agents'
    results record wall; these summaries carry none), no baseline: sentences, no bare grid."""
    hist = tmp_path / "h"
    for day in (1, 2):
        history.write_summary(hist, history.RunSummary(
            date=f"2026-11-0{day}", recorded_at=f"2026-11-0{day}T10:00:00Z", commit=None,
            agent="noop", ci_eval_version="0",
            tasks={"task-001-x": history.TaskRecord("task-001-x", 3, 0, 0, 3)}))
    assert run_site(cli, tmp_path, hist, tmp_path / "out").returncode == 0
    dom, console = chromium_dom(tmp_path / "out" / "index.html")
    assert console == []
    assert "No run in this history recorded a cost" in section(dom, "Cost per agent run")
    assert "recorded its wall time" in section(dom, "Wall time per agent run")
    assert "no baseline.json: each task is compared with its own earlier runs" in dom
    assert "No task has a baseline entry or earlier runs to compare with yet." in dom
    assert "No task is flaky by this rule." in dom and "<svg" not in dom
    # the empty baseline.json that `ci-eval init` writes
    (tmp_path / "baseline.json").write_text('{"schema_version": 3, "agent": null, "tasks": {}}')
    assert run_site(cli, tmp_path, hist, tmp_path / "out").returncode == 0
    dom, console = chromium_dom(tmp_path / "out" / "index.html")
    assert console == [] and "the baseline has no entries yet" in dom


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
    page = (tmp_path / "out" / "index.html").read_text()
    assert "No run summaries recorded yet" in page and "No task has a recorded run yet" in page


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
    # a baseline that was named must exist; a broken one at the default path is bad input too
    assert_bad_input(run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out", "--baseline",
                              "nope.json"), "nope.json", "baseline file not found")
    (tmp_path / "baseline.json").write_text("{")
    assert_bad_input(run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out"), "baseline.json")
    assert not (tmp_path / "out").exists()


def test_odd_numbers_in_a_history_file_do_not_crash_the_page(tmp_path, cli):
    """Counts and usage at the schema's bounds build a page (never summed into an overflow or
    a non-finite number the page's JSON cannot hold); beyond the
    schema's bounds the file is refused, one line naming it and the field (exit 2)."""
    (tmp_path / "h").mkdir()
    summary = tmp_path / "h" / "2026-11-01-001-no-commit.json"

    def write(count, tokens, cost, wall):
        summary.write_text(json.dumps({
            "format": "ci-eval-run-summary", "schema_version": 1, "date": "2026-11-01",
            "recorded_at": "2026-11-01T10:00:00Z", "commit": None, "agent": "x",
            "ci_eval_version": "0", "tasks": {
                "task-001-x": {"runs": count, "passes": count, "errors": count,
                               "requested": count, "status": "pass"},
                "task-002-y": {"runs": 5, "passes": 5, "errors": 0, "requested": 5,
                               "status": "pass", "tokens": tokens, "cost_usd": cost,
                               "wall_seconds": wall}}}))

    write(10 ** 6, 10 ** 18, 1e12, 1e13)  # the schema's largest values
    done = run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == 2
    page = (tmp_path / "out" / "index.html").read_text()
    assert "Infinity" not in page and "NaN" not in page
    write(10 ** 30, 10 ** 30, 1e308, 1.7e308)
    done = run_site(cli, tmp_path, tmp_path / "h", tmp_path / "out2", "--json")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert summary.name in line and "expected integer 0-1000000" in line, line
    assert not (tmp_path / "out2").exists()


def test_no_network_even_for_a_file_url():
    """The page's policy leaves nothing to fetch: every source but inline script and style
    is 'none' (a regression here would let a recorded string pull a remote resource)."""
    from ci_eval.render.site import CSP

    assert CSP.startswith("default-src 'none';") and "http" not in CSP
    assert os.path.isfile(REPO / "ci_eval" / "render" / "vendor" / "uplot" / "LICENSE")


@needs_chromium
def test_the_dashboard_of_a_history_recorded_through_the_cli(tmp_path, cli):
    """A real history: a bundled task run through `ci-eval run` (reference, then noop), each
    run recorded with `history record`, the baseline from the first run by `baseline update`.
    The page names the drop, marks the agent change and the failing run, draws the recorded wall
    time, and says that no cost was recorded."""
    task = "task-015-changelog-unreleased-entry"
    root = tmp_path / "repo"
    shutil.copytree(REPO / "tasks" / task, root / "tasks" / task)
    hist = tmp_path / "history"
    for day, agent in ((1, "reference"), (2, "reference"), (3, "noop")):
        ran = cli("run", "--root", root, "--agent", agent, "-k", "5", "-j", "2", "--fresh",
                  timeout=600)
        assert ran.returncode == 0, ran.stderr[-2000:]
        if day == 1:
            recorded = cli("baseline", "update", "--all", "--root", root, "--results", "results",
                           "--date", "2026-11-01")
            assert recorded.returncode == 0, recorded.stderr
        done = cli("history", "record", "--root", root, "--results", "results", "--history",
                   hist, "--date", f"2026-11-0{day}")
        assert done.returncode == 0, done.stderr
    site = cli("history", "site", "--root", root, "--history", hist, "--out", tmp_path / "out",
               "--json")
    assert site.returncode == 0, site.stderr
    assert json.loads(site.stdout)["worse"] == 1
    dom, console = chromium_dom(tmp_path / "out" / "index.html")
    assert console == []
    worse = section(dom, "What got worse since the baseline")
    assert task in worse and "(10/15)" in worse and "worse" in worse
    grid = section(dom, "Every task in every run")
    assert ">B<" in grid and ">A<" in grid and ">!<" in grid
    assert "No run in this history recorded a cost" in section(dom, "Cost per agent run")
    assert "<svg" in section(dom, "Wall time per agent run")
