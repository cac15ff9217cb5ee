"""results/stream.py: records read a line at a time (the diff skipped over) give what
store.read_file gives, refuse what it refuses with the same words, and summarize the same."""

from __future__ import annotations

import json

import pytest

from ci_eval.errors import UserError
from ci_eval.results import store, stream
from ci_eval.results.summary import summarize_results

TASK = "task-001-x"


def record(run: int, **extra) -> dict:
    base = {"agent": "claude-code", "agent_exit_code": 0, "attempt": 1, "cost_usd": 0.25,
            "diff": f"diff --git a/x b/x\n+\"quoted\" \\ run {run}\n", "diff_truncated": False,
            "k": 5, "passed": True, "prompt_hash": "sha256:" + "a" * 64, "reason": "",
            "requested": 5, "run": run, "status": "pass", "task": TASK, "tokens": 100,
            "wall_seconds": 1.5, "isolation": "agent-sandbox,checks-sandbox"}
    base.update(extra)
    base["passed"] = base["status"] == "pass"
    return base


def write(folder, *lines: str | dict, name: str = TASK):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("".join((json.dumps(x, sort_keys=True) if isinstance(x, dict) else x) + "\n"
                            for x in lines))
    return path


def both(path, **kwargs):
    """(records by read_file, records by the stream) -- or the UserError each raised."""
    out = []
    for read in (lambda: store.read_file(path, **kwargs).records,
                 lambda: [r for _, r in stream.RecordReader(path, keep_diff=False, **kwargs)]):
        try:
            out.append(read())
        except UserError as exc:
            out.append(str(exc))
    return out


def test_records_are_those_of_read_file_without_their_diff(tmp_path):
    outcome = {"diff": "nested key, not the run's diff", "subtype": "success"}
    path = write(tmp_path, record(1), record(2, status="fail", reason="FAIL: x"),
                 record(3, agent_outcome=outcome), "", "   ")
    full, streamed = both(path)
    assert [r["diff"] for r in streamed] == [None, None, None]
    assert [dict(r, diff=None) for r in full] == streamed
    assert streamed[2]["agent_outcome"] == outcome


def test_a_line_in_another_layout_is_parsed_whole(tmp_path):
    odd = json.dumps(record(1))  # keys not sorted: no "diff_truncated" right after the diff
    no_marker = json.dumps({k: v for k, v in record(2).items() if k != "diff_truncated"},
                           sort_keys=True)
    path = write(tmp_path, odd, no_marker, record(3, diff=None))
    full, streamed = both(path)
    assert [dict(r, diff=None) for r in full] == streamed


@pytest.mark.parametrize("lines, allow", [
    ([record(1), record(1)], False),                                   # a run twice
    ([record(1), record(2, agent="noop")], False),                     # another agent
    ([record(1), record(9)], False),                                   # beyond what was asked
    ([record(1), "{not json", record(2)], False),                      # a bad middle line
    ([record(1), json.dumps(record(2), sort_keys=True)[:-40]], False),  # torn last line
    ([record(1), json.dumps(record(2), sort_keys=True)[:-40]], True),   # ... when resuming
    ([record(1), record(2, status="maybe")], False),                   # a bad field
    ([record(1), record(2, tokens=-1)], False),
    ([record(1), record(2, cost_usd=float("nan"))], False),
    ([record(1), record(2, task="task-002-y")], False),
    ([record(1, diff="x" * 3000)], False),
])
def test_the_same_refusals_in_the_same_words(tmp_path, lines, allow):
    path = write(tmp_path, *lines)
    full, streamed = both(path, allow_torn_tail=allow)
    if isinstance(full, str):
        assert streamed == full
    else:
        assert [dict(r, diff=None) for r in full] == streamed


def test_lines_longer_than_a_chunk_and_crlf_endings(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "CHUNK_BYTES", 64)
    path = tmp_path / f"{TASK}.jsonl"
    path.write_bytes(b"".join(json.dumps(record(n, diff="d" * 500), sort_keys=True).encode()
                              + b"\r\n" for n in (1, 2, 3)))
    full, streamed = both(path)
    assert [dict(r, diff=None) for r in full] == streamed and len(streamed) == 3


def test_summaries_from_rows_equal_summaries_from_records(tmp_path):
    folder = tmp_path / "results"
    write(folder, record(2, status="fail", reason="FAIL: b", wall_seconds=3.0),
          record(1, status="timeout", reason="agent ran out of time", tokens=None),
          record(3), record(4, status="error", reason="workspace setup failed: x"),
          record(5, status="fail", reason="FAIL: b", agent_exit_code=2, cost_usd=None))
    write(folder, record(1, task="task-002-y"), name="task-002-y")
    by_records = summarize_results(records_of(folder))
    by_rows = summarize_results(stream.load_runs(folder))
    assert by_rows == by_records
    assert by_rows[TASK].failure_reasons == (
        ("FAIL: b", 2), ("agent ran out of time", 1), ("workspace setup failed: x", 1))


def test_a_folder_mixing_agents_is_refused_naming_the_second_file(tmp_path):
    folder = tmp_path / "results"
    write(folder, record(1))
    write(folder, record(1, task="task-002-y", agent="noop"), name="task-002-y")
    with pytest.raises(UserError, match="results mix agents") as by_rows:
        stream.load_runs(folder)
    assert str(by_rows.value.path).endswith("task-002-y.jsonl:1")


def _with_diff_text(run: int, raw: str, **extra) -> str:
    """A line as `ci-eval run` writes it, with `raw` as the JSON text of the diff's inside."""
    line = json.dumps(record(run, diff="@@", **extra), sort_keys=True)
    return line.replace('"diff": "@@"', f'"diff": "{raw}"')


@pytest.mark.parametrize("raw", [
    'x", "cost_usd": -5, "zz": "',      # a field hidden in the diff: refused as read_file does
    'x", "run": 1, "zz": "',            # ... a duplicate key overriding the run
    'x\\\\", "cost_usd": -5, "zz": "',  # ... after an escaped backslash
    'x",\t"cost_usd": -5, "zz": "',
    "ends with a backslash \\",         # escapes the closing quote: the line is not JSON
    "fine \\\\\\\" and \\u00e9",
])
def test_a_diff_hides_no_field(tmp_path, raw):
    path = write(tmp_path, record(1, cost_usd=1.0), _with_diff_text(2, raw, cost_usd=1.0),
                 record(3))
    full, streamed = both(path)
    if isinstance(full, str):
        assert streamed == full
    else:
        assert [dict(r, diff=None) for r in full] == streamed


@pytest.mark.parametrize("raw", ["bad \\x escape", "raw \t tab", "\\u12G4"])
def test_the_text_of_a_diff_is_not_parsed(tmp_path, raw):
    """The one difference from read_file (documented in stream.py): a diff whose own text is
    not well-formed JSON does not make report/compare refuse the line; they never read it."""
    path = write(tmp_path, record(1), _with_diff_text(2, raw))
    with pytest.raises(UserError, match="not valid JSON|torn last line"):
        store.read_file(path)
    streamed = [r for _, r in stream.RecordReader(path, keep_diff=False)]
    assert [r["run"] for r in streamed] == [1, 2] and streamed[1]["diff"] is None


def test_line_ends_as_text_mode_reads_them(tmp_path):
    path = tmp_path / f"{TASK}.jsonl"
    one, two = (json.dumps(record(n), sort_keys=True).encode() for n in (1, 2))
    for data in (one + b"\r" + two + b"\r", one + b"\r\r\n" + two, one + b"\r{bad\r\n" + two,
                 one + b"\n\x1c\n" + two + b"\n\xc2\x85\n", one + b"\n" + two + b"\r" + b"{"):
        path.write_bytes(data)
        for allow in (False, True):
            full, streamed = both(path, allow_torn_tail=allow)
            if isinstance(full, str):
                assert streamed == full
            else:
                assert [dict(r, diff=None) for r in full] == streamed


def test_a_bad_field_later_in_the_file_is_named_before_a_run_recorded_twice(tmp_path):
    path = write(tmp_path, record(1), record(1), record(2, tokens=-1))
    full, streamed = both(path)
    assert "tokens" in full and streamed == full


def test_rubric_and_setup_summaries_from_rows_equal_those_from_records(tmp_path):
    folder = tmp_path / "results"
    graded = {"rubric_score": 72.5, "rubric_verdict": "PASS",
              "rubric_tripped": ["c2", "c1", "c2"], "rubric_auto_fail": []}
    write(folder, record(3, **{**graded, "rubric_tripped": ["c1"]}), record(1, **graded),
          record(2, status="fail", reason="x", rubric_score=10, rubric_verdict="FAIL",
                 rubric_tripped=["c3"], rubric_auto_fail=["gate"]),
          record(4, status="error", reason="key missing; rest", agent_exit_code=1),
          record(5, status="error", reason=None))
    by_records = summarize_results(records_of(folder))
    by_rows = summarize_results(stream.load_runs(folder))
    assert by_rows == by_records
    assert by_rows[TASK].rubric_tripped == (("c1", 2), ("c2", 1), ("c3", 1))
    runs = stream.load_runs(folder)[TASK]
    assert [o[0] for o in runs.outcomes()] == ["pass", "fail", "pass", "error", "error"]


def records_of(folder):
    """task id -> its records sorted by run, read whole (store.read_records): what the streamed
    rows must summarize to."""
    return {path.name[: -len(".jsonl")]: sorted(store.read_records(path), key=lambda r: r["run"])
            for path in sorted(folder.glob("*.jsonl"))}


# --- the run limit and duplicates, as the stream reads them (mutants of RunChecks) -------------

def test_a_run_recorded_twice_is_refused_when_the_copy_is_an_error(tmp_path):
    path = write(tmp_path, record(1), record(2), record(1, status="error", reason="x"))
    with pytest.raises(UserError, match="run 1 recorded twice") as caught:
        list(stream.RecordReader(path, keep_diff=False))
    assert str(caught.value.path).endswith(":3")
    with pytest.raises(UserError, match="run 1 recorded twice"):
        store.read_file(path)


def test_errored_runs_extend_the_run_limit_by_one_number_each(tmp_path):
    """k=5 with two errors: runs 1..7 are valid results (each error kept its number and the run
    was made again); run 8 is beyond what was asked."""
    errors = [record(run, status="error", reason="provider overloaded") for run in (2, 4)]
    fine = [record(run) for run in (1, 3, 5, 6, 7)]
    path = write(tmp_path / "ok", *fine, *errors)
    assert sorted(r["run"] for _, r in stream.RecordReader(path, keep_diff=False)) == list(
        range(1, 8))
    assert stream.load_runs(tmp_path / "ok")[TASK].rows  # the folder is read, not refused
    beyond = write(tmp_path / "beyond", *fine, *errors, record(8))
    with pytest.raises(UserError, match=r"run 8 is beyond the runs asked of the task \(7"):
        list(stream.RecordReader(beyond, keep_diff=False))


def test_confirmation_runs_count_up_to_requested_plus_errors(tmp_path):
    """k=5 confirmed to 10 (requested 10) with one error: runs 1..11 are valid."""
    runs = [record(run, requested=10) for run in range(1, 12) if run != 6]
    path = write(tmp_path, *runs, record(6, requested=10, status="error", reason="x"))
    assert len(list(stream.RecordReader(path, keep_diff=False))) == 11
    too_many = write(tmp_path / "more", *runs, record(6, requested=10, status="error",
                                                      reason="x"), record(12, requested=10))
    with pytest.raises(UserError, match="run 12 is beyond"):
        list(stream.RecordReader(too_many, keep_diff=False))
