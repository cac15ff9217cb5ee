"""Issue #18, class 6: one usage file took down the folder's verdict.

`{"tokens": 10**400, ...}` passed the usage file's field rules; then `run` exited 3
(OverflowError) and so did `report`, `compare`, `baseline update` and `history record` on that
folder. Defence: every number has a bound where it is read (ci_eval/results/store.py
NUMBER_LIMITS: tokens a whole number 0-10**12, cost 0-10**6, seconds 0-10**7): out of range in
what the agent reports, the field is recorded null with a note on that run; out of range in a
results line read back, the line is an error naming file:line (exit 2), never a crash.
"""

from __future__ import annotations

import json

import pytest

from .conftest import needs_sandbox

HUGE = 10**400
WRITE_USAGE = '''import json, os
open("greet.txt", "w").write("hello\\n")
with open(os.environ["CI_EVAL_USAGE_FILE"], "w") as f:
    f.write(json.dumps({usage}))
'''


USAGES = {  # task -> what its agent writes as usage (one `ci-eval run` runs them all)
    "task-001-huge": (f'{{"tokens": {HUGE}, "cost_usd": {HUGE}, "input_tokens": 5, '
                      f'"output_tokens": 1e999}}'),
    "task-002-edge": f'{{"tokens": {10**12}, "cost_usd": {10**6}}}',
    "task-003-past": f'{{"tokens": {10**12 + 1}, "cost_usd": 1000000.01}}',
    "task-004-honest": '{"tokens": 1200, "cost_usd": 0.25}',
}


def _every_command(arena, out: str) -> dict:
    """Exit codes of the commands that read a results folder."""
    codes = {}
    for name, args in {
        "report": ("report", "--results", out),
        "compare": ("compare", "--results", out),
        "baseline update": ("baseline", "update", "--all", "--results", out),
        "history record": ("history", "record", "--results", out, "--history", f"{out}-history",
                           "--date", "2026-12-01"),
    }.items():
        result = arena.run(*args)
        assert "Traceback" not in result.stderr, result.detail()
        codes[name] = (result.returncode, result.stdout + result.stderr)
    return codes


@pytest.fixture(scope="module")
def usage_runs(module_arena):
    """One `ci-eval run` over a task per usage file: task id -> its record."""
    for task, usage in USAGES.items():
        module_arena.task(task)
        (module_arena.agents / f"{task}.py").write_text(WRITE_USAGE.format(usage=usage))
    dispatch = module_arena.agent(
        "import os, runpy\n"
        f"runpy.run_path(os.path.join({str(module_arena.agents)!r}, "
        "os.environ['CI_EVAL_TASK_ID'] + '.py'))\n", shell="python")
    result = module_arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", dispatch)
    assert result.returncode == 0, result.detail()
    return module_arena, result.by_task()


@needs_sandbox
def test_a_usage_file_with_10_to_the_400_tokens_leaves_a_verdict(usage_runs):
    """The attack, and every command that reads the folder afterwards: exit 0 or 1, never 3.
    The honest twin's usage is recorded as written."""
    arena, records = usage_runs
    record = records["task-001-huge"]
    assert record["status"] == "pass", record
    assert record["tokens"] is None and record["cost_usd"] is None, record
    assert record["input_tokens"] == 5 and record["output_tokens"] is None, record
    assert "usage file: ignored tokens 1000" in record["reason"], record["reason"]
    assert "cost_usd 1000" in record["reason"], record["reason"]
    for name, (code, text) in _every_command(arena, "results").items():
        assert code in (0, 1), f"{name}: exit {code}\n{text}"
    honest = records["task-004-honest"]
    assert honest["tokens"] == 1200 and honest["cost_usd"] == 0.25, honest
    assert "usage" not in honest["reason"], honest["reason"]


@needs_sandbox
def test_the_largest_usage_that_is_accepted_and_one_past_it(usage_runs):
    """The bounds are inclusive: 10**12 tokens and $10**6 are recorded; one token or one cent
    more is null with a note."""
    _, records = usage_runs
    edge, past = records["task-002-edge"], records["task-003-past"]
    assert edge["tokens"] == 10**12 and edge["cost_usd"] == 10**6, edge
    assert past["tokens"] is None and past["cost_usd"] is None, past
    assert "ignored tokens" in past["reason"], past["reason"]


def test_a_huge_number_in_a_results_line_is_an_error_naming_file_and_line(arena):
    """Results are read back validated: a line holding 10**400 tokens (a results file from an
    artifact, a hand edit) is exit 2 naming file:line and the field, for every command that
    reads it; no traceback, no exit 3."""
    arena.task()
    out = arena.repo / "results"
    out.mkdir()
    line = {"run": 1, "task": "task-001-greet", "status": "pass", "passed": True,
            "agent": "cmd", "tokens": 1200, "cost_usd": 0.0, "wall_seconds": 1.0}
    huge = {**line, "run": 2, "tokens": HUGE}
    (out / "task-001-greet.jsonl").write_text(json.dumps(line) + "\n" + json.dumps(huge) + "\n")
    for name, (code, text) in _every_command(arena, "results").items():
        assert code == 2, f"{name}: exit {code}\n{text}"
        assert "task-001-greet.jsonl:2" in text and "tokens" in text, f"{name}: {text}"
        assert "expected at most 1000000000000 (a bound of ci-eval's)" in text, f"{name}: {text}"


def test_every_reader_of_numbers_has_the_same_bounds():
    """number_problem (results lines, the usage file), the fast path of the results reader and
    the presets' count/money readers agree at the edges; bound_usage nulls a sum past them."""
    from ci_eval.agents.preset import count, money
    from ci_eval.results.records import _plainly_valid, bound_usage, number_problem

    assert number_problem("tokens", 10**12) is None
    assert number_problem("tokens", 10**12 + 1) == (
        "expected at most 1000000000000 (a bound of ci-eval's), got 1000000000001")
    assert number_problem("tokens", HUGE).startswith("expected at most 1000000000000")
    assert number_problem("cost_usd", 10**6) is None and number_problem("cost_usd", 1e6 + 0.01)
    assert number_problem("wall_seconds", 10**7) is None and number_problem("wall_seconds", HUGE)
    assert number_problem("k", 10**6) is None and number_problem("k", 10**6 + 1)
    base = {"run": 1, "task": "t", "status": "pass", "passed": True, "agent": "a"}
    assert _plainly_valid({**base, "tokens": 10**12, "cost_usd": 1e6}, "t")
    for bad in ({"tokens": 10**12 + 1}, {"cost_usd": HUGE}, {"cost_usd": float("nan")},
                {"wall_seconds": 1e7 + 1}, {"run": 10**6 + 1}, {"k": HUGE}):
        assert not _plainly_valid({**base, **bad}, "t"), bad
    assert count(10**12) == 10**12 and count(10**12 + 1) is None and count(HUGE) is None
    assert count(1e300) is None and count(1200.0) == 1200
    assert money(10**6) == 1e6 and money(HUGE) is None and money(1e308) is None
    record = {"tokens": 3 * 10**12 // 2, "cost_usd": 0.5, "reason": "ok"}
    assert bound_usage(record) == ["tokens out of range (1500000000000): recorded as null"]
    assert record["tokens"] is None and record["cost_usd"] == 0.5
