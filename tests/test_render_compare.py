"""Rendering a Verdict: the PR-comment markdown (marker, verdict line, tables, cap), JSON, JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from fractions import Fraction as F

from ci_eval.render import compare as rc
from ci_eval.render import compare_cells as cells
from ci_eval.verdict.calibration import check_task
from ci_eval.verdict.model import TaskVerdict, Verdict


def tv(task, status, base=(4, 5), cur=(4, 5), *, gated=True, **kw) -> TaskVerdict:
    return TaskVerdict(
        task=task, status=status, gated=gated,
        baseline_passes=base[0] if base else None, baseline_runs=base[1] if base else None,
        passes=cur[0] if cur else None, runs=cur[1] if cur else None,
        requested=cur[1] if cur else None, **kw)


def sample(**kw) -> Verdict:
    tasks = (
        tv("task-001-steady", "unchanged", baseline_tokens=1000.0, tokens=1500.0,
           baseline_wall_seconds=10.0, wall_seconds=8.0),
        tv("task-002-broken", "regressed", cur=(1, 5)),
        tv("task-003-fresh", "new", base=None, gated=False, note="no baseline"),
        tv("task-004-gone", "missing", cur=None, note="baseline entry, but no task folder"),
    )
    kw.setdefault("calibration", (check_task("task-001-steady", F(1, 5),
                                             [("d1", 5, 5), ("d2", 5, 5), ("d3", 4, 5)]),))
    return Verdict(tasks=tasks, k=5, agent="ref", baseline_agent="ref", **kw)


def test_markdown_layout():
    text = rc.render_markdown(sample(), commit="0123456789abcdef")
    lines = text.splitlines()
    assert lines[0] == "<!-- ci-eval-report -->"
    assert lines[1] == ("### ❌ ci-eval: 1 of 4 task(s) fail the gate — 1 regressed · 1 new · "
                        "1 missing · 1 unchanged")
    changed, full = text.split("<details>")
    assert "task-002-broken" in changed and "task-003-fresh" in changed
    assert "task-004-gone" in changed and "task-001-steady" not in changed
    assert "<summary>All 4 tasks</summary>" in full and "task-001-steady" in full
    assert "</details>" in full
    assert "| task-002-broken | regressed | 0.80 (4/5) | 0.20 (1/5) | -0.60 | — | 1/5 pass, " in text
    assert "| +500 (+50%) | -2.0s (-20%) |" in text
    assert "#### Calibration warnings" in text and "checks look too loose" in text
    footer = lines[-1]
    assert footer.startswith("<sub>") and "agent `ref`" in footer and "k=5" in footer
    assert "commit 0123456789ab" in footer


def test_markdown_passing_verdict_and_nothing_changed():
    verdict = Verdict(tasks=(tv("task-001-a", "unchanged"),), k=5, agent="ref")
    text = rc.render_markdown(verdict)
    assert text.splitlines()[1] == "### ✅ ci-eval: no regressions — 1 unchanged"
    assert "No task changed status." in text and "commit unknown" in text
    assert "Calibration" not in text


def test_markdown_escapes_pipes_in_notes():
    verdict = Verdict(tasks=(tv("task-001-a", "new", note="a | b"),), k=5)
    assert "a \\| b" in rc.render_markdown(verdict)


def test_markdown_is_capped_with_a_note():
    tasks = tuple(tv(f"task-{i:04d}-some-long-task-name-here", "regressed" if i % 2 else
                     "unchanged", cur=(1, 5), note="x" * 40) for i in range(2000))
    verdict = Verdict(tasks=tasks, k=5, agent="ref")
    text = rc.render_markdown(verdict)
    assert len(text) <= rc.MAX_COMMENT_CHARS
    assert text.startswith(rc.COMMENT_MARKER)
    assert "Truncated:" in text and "65,536-character comment limit" in text
    assert "1000 of 2000 task(s) fail the gate" in text
    assert text.rstrip().endswith("</sub>")  # footer survives
    kept = text.count("| task-")
    omitted = int(text.split("Truncated: ")[1].split(" ")[0])
    assert kept + omitted == 1000 + 2000


def test_markdown_cap_drops_the_full_table_first():
    tasks = tuple(tv(f"task-{i:04d}-x", "unchanged" if i else "regressed", cur=(1, 5))
                  for i in range(600))
    text = rc.render_markdown(Verdict(tasks=tasks, k=5), limit=20_000)
    assert len(text) <= 20_000
    changed = text.split("<details>")[0]
    assert "| task-0000-x | regressed" in changed


def test_markdown_hard_cut_when_notes_alone_are_too_long():
    verdict = Verdict(tasks=(), k=5, notes=("n" * 500,))
    text = rc.render_markdown(verdict, limit=300)
    assert len(text) <= 300 and "Truncated at the comment limit" in text


def test_json():
    data = json.loads(rc.render_json(sample(), commit="abc"))
    assert data["passed"] is False and data["exit_code"] == 1 and data["commit"] == "abc"
    assert data["counts"] == {"regressed": 1, "new": 1, "missing": 1, "unchanged": 1}
    broken = data["tasks"][1]
    assert broken["status"] == "regressed" and broken["fails_gate"] is True
    assert broken["baseline"] == {"passes": 4, "runs": 5, "pass_rate": 0.8}
    assert broken["current"]["passes"] == 1 and len(broken["current"]["interval_95"]) == 2
    assert broken["delta"] == -0.6
    assert data["tasks"][0]["tokens"] == {"baseline": 1000.0, "current": 1500.0, "delta": 500.0}
    assert data["tasks"][3]["current"] is None
    assert data["rule"] == {
        "regression_drop": "3/10", "strict": True, "regression_threshold": "3/10",
        "min_baseline_rate": "3/5", "axis_alpha": 0.0003,
        "axes": {axis: {"max_increase": "1/2", "fail": False} for axis in ("cost", "tokens", "wall")},
        "drift": "warn"}
    assert data["tasks"][0]["control"] is None  # no control arm (run --control-ref) here
    assert data["calibration"][0]["direction"] == "too loose"


def test_junit():
    root = ET.fromstring(rc.render_junit(sample()))
    suite = root.find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "1"
    assert suite.get("skipped") == "1"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["task-002-broken"].find("failure").get("type") == "regressed"
    assert cases["task-004-gone"].find("skipped") is not None
    assert cases["task-001-steady"].find("failure") is None


def test_table():
    text = rc.render_table(sample(), commit=None)
    first = text.splitlines()[0]
    assert first.startswith("FAIL ci-eval: 1 of 4 task(s) fail the gate")
    assert "95% CI" in text and "Calibration warnings:" in text
    assert max(len(line) for line in text.splitlines()) <= 100  # a 100-column terminal


def test_a_table_of_long_task_ids_fits_100_columns_and_keeps_their_numbers():
    from ci_eval.render.terminal import fit_table

    rows = [[f"task-{n:03d}-" + "a-very-long-descriptive-name" * 2, "unchanged", "1.00 (40/40)",
             "renamed from task-009-an-even-longer-name-that-someone-chose"] for n in (1, 2)]
    text = fit_table(rows, ["Task", "Status", "Baseline", "Note"])
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "task-001-" in text and "task-002-" in text and "…" in text


def test_cells():
    assert rc.fmt_delta(F(-3, 10)) == "-0.30"
    assert rc.fmt_delta(F(0)) == "±0.00"
    assert rc.fmt_delta(None) == "—"
    assert cells.fmt_change(2500.0, 10000.0) == "+2.5k (+25%)"
    assert cells.fmt_change(-1.25, None, "s") == "-1.2s"
    assert rc.fmt_rate(None, None) == "—"
