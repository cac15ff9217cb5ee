"""The gate rule and task classification (pure): exact boundaries, every status, renames."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from ci_eval.errors import UserError
from ci_eval.results.records import one_agent
from ci_eval.results import summary as summary_mod
from ci_eval.results.summary import summarize
from ci_eval.verdict import baseline as baseline_mod
from ci_eval.verdict import gate, model
from ci_eval.verdict.baseline import Baseline, BaselineEntry
from ci_eval.verdict.rules import GateRules

HASH_A = "sha256:" + "a" * 64
HASH_B = "sha256:" + "b" * 64


def records(task: str, outcomes: str, agent: str = "ref", prompt_hash: str = HASH_A) -> list:
    """outcomes: one letter per run: p(ass) f(ail) t(imeout) e(rror)."""
    status = {"p": "pass", "f": "fail", "t": "timeout", "e": "error"}
    return [
        {"run": i, "task": task, "status": status[c], "passed": c == "p", "agent": agent,
         "prompt_hash": prompt_hash, "tokens": 100, "wall_seconds": 2.0}
        for i, c in enumerate(outcomes, start=1)
    ]


def result(task: str, outcomes: str, k: int | None = None, **kw) -> model.TaskResult:
    recs = records(task, outcomes, **kw)
    hashes = frozenset(r["prompt_hash"] for r in recs)
    return model.TaskResult(summarize(task, recs, k), hashes)


def entry(task: str, passes: int, runs: int, **kw) -> BaselineEntry:
    kw.setdefault("prompt_hash", HASH_A)
    return BaselineEntry(task=task, passes=passes, runs=runs, recorded="2026-01-01", **kw)


def state(task: str, **kw) -> model.TaskState:
    kw.setdefault("prompt_hash", HASH_A)
    return model.TaskState(task=task, number=int(task.split("-")[1]), **kw)


# --- the rule at its edges ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "current", "regressed"),
    [
        (F(4, 5), F(2, 5), True),  # 0.80 -> 0.40
        (F(4, 5), F(3, 5), False),  # 0.80 -> 0.60
        (F(4, 5), F(1, 2), False),  # a drop of exactly 0.30
        (F(8, 10), F(5, 10), False),  # 10-run rates, exactly 0.30
        (F(8, 10), F(4, 10), True),
        (F(9, 10), F(3, 5), False),  # 0.9 - 0.6 > 0.3 in floats; exactly 0.30 in fractions
        (F(7, 10), F(2, 5), False),
        (F(1), F(7, 10), False),
        (F(1), F(69, 100), True),
        (F(4, 5), F(49, 100), True),
    ],
)
def test_regression_rule_edges(baseline, current, regressed):
    assert gate.is_regression(baseline, current) is regressed
    assert (gate.rate_status(baseline, current.numerator, current.denominator) == "regressed") \
        is regressed


def test_the_exact_edge_holds_from_recorded_runs_to_the_verdict():
    """0.9 -> 0.6 is a drop of exactly 0.30 (0.30000000000000004 in floats): unchanged, when
    the baseline entry and the summary of real records meet in classify()."""
    entry = BaselineEntry("task-001-a", 9, 10, "2026-01-01", "sha256:x")
    records = [{"run": n, "task": "task-001-a", "status": "pass" if n <= 6 else "fail",
                "passed": n <= 6, "agent": "a"} for n in range(1, 11)]
    result = model.TaskResult(summarize("task-001-a", records, k=10))
    state = model.TaskState("task-001-a", 1, "sha256:x")
    assert gate.classify("task-001-a", entry, state, result).status == "unchanged"
    records[5] = {**records[5], "status": "fail", "passed": False}  # 5/10: a drop of 0.40
    result = model.TaskResult(summarize("task-001-a", records, k=10))
    assert gate.classify("task-001-a", entry, state, result).status == "regressed"


@pytest.mark.parametrize(
    ("baseline", "passes", "runs", "status"),
    [
        (F(3, 5), 5, 5, "improved"),  # +0.40
        (F(3, 5), 9, 10, "unchanged"),  # +0.30 exactly
        (F(3, 5), 3, 5, "unchanged"),
        (F(4, 5), 1, 5, "regressed"),
    ],
)
def test_rate_status(baseline, passes, runs, status):
    assert gate.rate_status(baseline, passes, runs) == status


def test_record_threshold_is_exact():
    assert baseline_mod.meets_record_threshold(F(3, 5))
    assert baseline_mod.meets_record_threshold(F(12, 20))
    assert not baseline_mod.meets_record_threshold(F(59, 100))
    assert not baseline_mod.meets_record_threshold(F(11, 20))


@pytest.mark.parametrize(("min_rate", "passes", "runs", "gated"), [
    (F(3, 5), 3, 5, True),  # the default, exactly
    (F(3, 5), 2, 5, False),  # one pass fewer
    (F(3, 5), 4, 5, True),  # one pass more
    (F(3, 5), 6, 10, True),
    (F(3, 5), 6, 11, False),  # one run more, the same passes: just below
    (F(7, 10), 7, 10, True),  # a threshold from ci-eval.yaml, exactly
    (F(7, 10), 6, 10, False),
    (F(7, 10), 8, 10, True),
    (F(7, 10), 7, 11, False),
    (F(7, 10), 7, 9, True),  # one run fewer, the same passes: just above
])
def test_an_entry_at_exactly_min_baseline_rate_is_gated(min_rate, passes, runs, gated):
    """The gate's side of min_baseline_rate (compare): an entry at the threshold gates, one run
    below it is aspirational; classify follows (a drop to 0 is a regression only when gated)."""
    rules = GateRules(min_baseline_rate=min_rate)
    baseline = entry("task-001-a", passes, runs)
    assert gate.is_gated_entry(baseline, rules) is gated
    assert gate.gated_baseline_rate(baseline, rules=rules) == (F(passes, runs) if gated else None)
    verdict = gate.classify("task-001-a", baseline, state("task-001-a"),
                            result("task-001-a", "fffff"), rules)
    assert (verdict.status, verdict.gated) == (("regressed", True) if gated else
                                               ("aspirational", False))


# --- classification -----------------------------------------------------------------------------


def test_regressed_task_fails_the_gate():
    v = gate.classify("task-001-a", entry("task-001-a", 4, 5), state("task-001-a"),
                      result("task-001-a", "ppfff"))
    assert v.status == "regressed" and v.fails_gate
    assert v.delta == F(-2, 5) and v.rate == F(2, 5) and v.baseline_rate == F(4, 5)
    low, high = v.interval
    assert 0 < low < 0.4 < high < 1


def test_drop_of_exactly_030_is_unchanged():
    v = gate.classify("task-001-a", entry("task-001-a", 8, 10), state("task-001-a"),
                      result("task-001-a", "pppppfffff"))
    assert v.status == "unchanged" and not v.fails_gate


@pytest.mark.parametrize("where", ["metadata", "entry"])
def test_aspirational_never_gates(where):
    e = entry("task-001-a", 5, 5, aspirational=where == "entry")
    s = state("task-001-a", aspirational=where == "metadata")
    for outcomes in ("fffff", "eeeee", "ppppp"):
        v = gate.classify("task-001-a", e, s, result("task-001-a", outcomes, k=5))
        assert v.status == "aspirational" and not v.gated and not v.fails_gate
    v = gate.classify("task-001-a", e, s, None)
    assert v.status == "aspirational" and not v.fails_gate


def test_aspirational_metadata_without_entry():
    v = gate.classify("task-001-a", None, state("task-001-a", aspirational=True),
                      result("task-001-a", "ff"))
    assert v.status == "aspirational"


def test_task_without_baseline_is_new():
    v = gate.classify("task-002-b", None, state("task-002-b"), result("task-002-b", "fffff"))
    assert v.status == "new" and not v.fails_gate and v.baseline_rate is None and v.delta is None


def test_entry_without_task_or_results_is_missing():
    v = gate.classify("task-003-c", entry("task-003-c", 5, 5), None, None)
    assert v.status == "missing" and not v.fails_gate


def test_gated_task_without_results_is_inconclusive():
    v = gate.classify("task-003-c", entry("task-003-c", 5, 5), state("task-003-c"), None)
    assert v.status == "inconclusive" and v.fails_gate and "no results" in v.note


def test_errors_make_a_gated_task_inconclusive():
    v = gate.classify("task-001-a", entry("task-001-a", 5, 5), state("task-001-a"),
                      result("task-001-a", "ppppe"))
    assert v.status == "inconclusive" and v.fails_gate
    assert "4 valid run(s) of 5" in v.note and v.errors == 1


def test_fewer_runs_than_k_is_inconclusive():
    v = gate.classify("task-001-a", entry("task-001-a", 5, 5), state("task-001-a"),
                      result("task-001-a", "ppp", k=5))
    assert v.status == "inconclusive"


def exited(task: str, outcomes: str, codes: str, k: int | None = None) -> model.TaskResult:
    """result() whose runs' agents exited with the given codes (one digit per run)."""
    recs = records(task, outcomes)
    for record, code in zip(recs, codes):
        record["agent_exit_code"] = int(code)
    return model.TaskResult(summarize(task, recs, k), frozenset({HASH_A}))


T = "task-001-a"


@pytest.mark.parametrize(("case", "status", "note"), [
    ("aspirational, no entry", "aspirational", "aspirational (metadata), no baseline"),
    ("no entry", "new", "no baseline"),
    ("no entry, no results", "new", "no baseline, no results"),
    ("entry only", "missing", "baseline entry, but no task folder and no results"),
    ("aspirational entry, no results", "aspirational",
     "aspirational (recorded below 0.60); no results"),
    ("gated, no results", "inconclusive", "no results"),
    ("errors", "inconclusive", "4 valid run(s) of 5; 1 errored run(s)"),
    ("aspirational with errors", "aspirational", "aspirational (metadata); 1 errored run(s)"),
    ("results without a folder", "unchanged", "not in tasks/"),
    ("agent exited", "unchanged", "agent exited non-zero in 2 of 5 runs"),
    ("agent exited with errors", "inconclusive",
     "agent exited non-zero in 1 of 5 runs; 4 valid run(s) of 5; 1 errored run(s)"),
    ("one run of one", "unchanged", ""),
])
def test_every_status_says_why_in_its_note(case, status, note):
    """The note is what the PR comment shows beside the status: each branch's exact words."""
    gated, folder = entry(T, 5, 5), state(T)
    args = {
        "aspirational, no entry": (None, state(T, aspirational=True), result(T, "ff")),
        "no entry": (None, folder, result(T, "ff")),
        "no entry, no results": (None, folder, None),
        "entry only": (gated, None, None),
        "aspirational entry, no results": (entry(T, 5, 5, aspirational=True), folder, None),
        "gated, no results": (gated, folder, None),
        "errors": (gated, folder, result(T, "ppppe")),
        "aspirational with errors": (gated, state(T, aspirational=True), result(T, "ppppe")),
        "results without a folder": (gated, None, result(T, "ppppp")),
        "agent exited": (gated, folder, exited(T, "ppppp", "01010")),
        "agent exited with errors": (gated, folder, exited(T, "ppppe", "00001")),
        "one run of one": (entry(T, 1, 1), folder, result(T, "p", k=1)),
    }[case]
    verdict = gate.classify(T, *args)
    assert (verdict.status, verdict.note) == (status, note)


def test_changed_prompt_fails():
    v = gate.classify("task-001-a", entry("task-001-a", 5, 5),
                      state("task-001-a", prompt_hash=HASH_B), result("task-001-a", "ppppp"))
    assert v.status == "prompt-changed" and v.fails_gate and "prompt.md changed" in v.note


def test_results_run_with_another_prompt_fail():
    v = gate.classify("task-001-a", entry("task-001-a", 5, 5), state("task-001-a"),
                      result("task-001-a", "ppppp", prompt_hash=HASH_B))
    assert v.status == "prompt-changed" and v.fails_gate


def test_prompt_change_on_aspirational_task_is_shown_not_gated():
    v = gate.classify("task-001-a", entry("task-001-a", 1, 5, aspirational=True),
                      state("task-001-a", prompt_hash=HASH_B), result("task-001-a", "ppppp"))
    assert v.status == "prompt-changed" and not v.fails_gate


def test_tokens_and_wall_deltas():
    e = entry("task-001-a", 5, 5, avg_tokens=80.0, avg_wall_seconds=4.0)
    v = gate.classify("task-001-a", e, state("task-001-a"), result("task-001-a", "ppppp"))
    assert v.tokens_delta == 20.0 and v.wall_delta == -2.0


# --- compare ------------------------------------------------------------------------------------


def test_compare_marks_renames_and_counts():
    baseline = Baseline("ref", {
        "task-001-a": entry("task-001-a", 4, 5),
        "task-002-old-name": entry("task-002-old-name", 5, 5, prompt_hash=HASH_B),
        "task-009-gone": entry("task-009-gone", 5, 5),
    })
    tasks = {"task-001-a": state("task-001-a"), "task-002-new-name": state("task-002-new-name")}
    results = {"task-001-a": result("task-001-a", "ppppp"),
               "task-002-new-name": result("task-002-new-name", "ppppp")}
    verdict = gate.compare(baseline, tasks, results, k=5, agent="ref")
    by = {t.task: t for t in verdict.tasks}
    assert by["task-002-new-name"].status == "new"
    assert "renamed from task-002-old-name" in by["task-002-new-name"].note
    assert by["task-002-old-name"].status == "missing"
    assert "renamed to task-002-new-name" in by["task-002-old-name"].note
    assert by["task-009-gone"].status == "missing" and "renamed" not in by["task-009-gone"].note
    assert verdict.counts == {"new": 1, "missing": 2, "unchanged": 1}
    assert verdict.passed and verdict.exit_code == 0


def test_rename_detected_by_prompt_hash():
    baseline = Baseline("ref", {"task-004-x": entry("task-004-x", 5, 5, prompt_hash=HASH_B)})
    tasks = {"task-010-y": state("task-010-y", prompt_hash=HASH_B)}
    verdict = gate.compare(baseline, tasks, {}, k=5)
    notes = {t.task: t.note for t in verdict.tasks}
    assert "renamed from task-004-x" in notes["task-010-y"]


def test_verdict_fails_on_any_gated_failure():
    baseline = Baseline("ref", {"task-001-a": entry("task-001-a", 5, 5),
                                "task-002-b": entry("task-002-b", 5, 5)})
    tasks = {"task-001-a": state("task-001-a"), "task-002-b": state("task-002-b")}
    results = {"task-001-a": result("task-001-a", "ppppp"),
               "task-002-b": result("task-002-b", "fffff")}
    verdict = gate.compare(baseline, tasks, results, k=5)
    assert not verdict.passed and verdict.exit_code == 1
    assert [t.task for t in verdict.failed] == ["task-002-b"]
    assert list(verdict.counts) == ["regressed", "unchanged"]


# --- k and agents -------------------------------------------------------------------------------


def test_gated_baseline_rate():
    assert gate.gated_baseline_rate(entry("task-001-a", 4, 5)) == F(4, 5)
    assert gate.gated_baseline_rate(entry("task-001-a", 4, 5), aspirational=True) is None
    assert gate.gated_baseline_rate(entry("task-001-a", 1, 5, aspirational=True)) is None
    assert gate.gated_baseline_rate(None) is None


def test_default_k():
    assert summary_mod.default_k([5, 5, 5, 10, 20]) == 5  # confirmation runs do not raise k
    assert summary_mod.default_k([5, 10]) == 5
    assert summary_mod.default_k([3, 5, 5]) == 5  # a crashed task stays short -> inconclusive
    assert summary_mod.default_k([]) == 1


def asked(outcomes: str, k: int, stages: tuple[int, ...] = ()) -> list:
    """Records as `ci-eval run` writes them: k, and `requested` raised by confirmation stages."""
    recs = records("task-001-a", outcomes)
    for rec in recs:
        rec["k"] = k
        rec["requested"] = next((s for s in (k, *stages) if rec["run"] <= s), rec["run"])
    return recs


def test_each_task_is_asked_its_own_recorded_count():
    loaded = {"task-001-a": asked("ppfff" + "ppppp", 5, (10,)),
              "task-002-b": asked("ppfff" + "ppppp", 5, (10,)),
              "task-003-c": asked("ppppp", 5)}
    summaries = summary_mod.summarize_results(loaded)
    assert {t: (s.requested, s.k, s.inconclusive) for t, s in summaries.items()} == {
        "task-001-a": (10, 5, False), "task-002-b": (10, 5, False), "task-003-c": (5, 5, False)}
    # the same runs recorded without k: the most common count (10) for every task
    bare = {t: [{k: v for k, v in r.items() if k not in ("k", "requested")} for r in recs]
            for t, recs in loaded.items()}
    assert summary_mod.summarize_results(bare)["task-003-c"].inconclusive
    # an explicit k overrides what the records say
    assert summary_mod.summarize_results(loaded, k=10)["task-003-c"].inconclusive
    assert summary_mod.typical_k(loaded) == 5


def test_errors_short_of_a_task_own_request_are_inconclusive():
    confirmed = asked("ppfff" + "eeeee", 5, (10,))  # the stage's runs all errored
    assert summarize("task-001-a", confirmed).inconclusive
    short = asked("pppe", 4)
    assert summarize("task-001-a", short).inconclusive
    resumed = asked("pp", 2) + [{**r, "k": 3, "requested": 3} for r in asked("ppp", 3)[2:]]
    s = summarize("task-001-a", resumed)
    assert (s.requested, s.runs, s.inconclusive) == (3, 3, False)


def test_check_agents():
    assert gate.check_agents("ref", "ref", allow_mismatch=False) == "ref"
    assert gate.check_agents(None, "x", allow_mismatch=False) == "x"
    assert gate.check_agents("ref", None, allow_mismatch=False) is None
    assert gate.check_agents("ref", "x", allow_mismatch=True) == "x"
    with pytest.raises(UserError, match="recorded with agent 'x' but the baseline with 'ref'"):
        gate.check_agents("ref", "x", allow_mismatch=False, results_path="results")


def test_one_agent_names_the_second_agent_s_file_and_line():
    assert one_agent([]) is None
    assert one_agent([("ref", "r/a.jsonl", 1), ("ref", "r/b.jsonl", 3)]) == "ref"
    with pytest.raises(UserError, match=r"results mix agents \('ref' at r/a.jsonl:1, 'x' here\)") as err:
        one_agent([("ref", "r/a.jsonl", 1), ("x", "r/b.jsonl", 3)])
    assert err.value.path == "r/b.jsonl:3"


def test_compare_carries_the_run_context_into_the_verdict():
    """What the renderers print above the table comes from the Verdict compare returns."""
    baseline = Baseline("ref", {T: entry(T, 5, 5)})
    verdict = gate.compare(baseline, {T: state(T)}, {T: result(T, "ppppp")}, k=5, agent="ref",
                           calibration=("a warning",), notes=("a note",))
    assert (verdict.k, verdict.agent, verdict.baseline_agent) == (5, "ref", "ref")
    assert (verdict.calibration, verdict.notes, verdict.setup_broken) == (("a warning",),
                                                                          ("a note",), None)
    assert [(t.task, t.status, t.note) for t in verdict.tasks] == [(T, "unchanged", "")]
    assert verdict.passed and verdict.exit_code == 0
    broken = gate.compare(baseline, {T: state(T)}, {T: result(T, "ppppp")}, k=5,
                          broken="ANTHROPIC_API_KEY is not set")
    assert broken.setup_broken == "ANTHROPIC_API_KEY is not set"
    assert not broken.passed and broken.exit_code == 1


def test_setup_broken_needs_two_runs_or_more_all_failing_for_one_reason():
    key = "ANTHROPIC_API_KEY is not set"
    assert gate.setup_broken([("error", True, key)]) is None  # one run proves nothing
    assert gate.setup_broken([("error", True, key), ("error", True, key)]) == key
    assert gate.setup_broken([("error", False, f"{key}; tail"), ("fail", True, key)]) == key
    assert gate.setup_broken([("error", True, key), ("error", True, "other")]) is None
    assert gate.setup_broken([("error", True, key), ("fail", False, key)]) is None
    assert gate.setup_broken([("error", True, None), ("error", True, "")]) == "no reason given"
    assert gate.setup_broken([]) is None
