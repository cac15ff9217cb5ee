"""The session of `ci-eval generate` (ci_eval/generate/session.py) with candidates made by hand:
numbering, duplicates, a crash of one candidate, resuming from the journal and from a task
moved into place whose journal line a kill cut off."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ci_eval.generate import decide
from ci_eval.generate.candidate import Candidate
from ci_eval.generate.session import JOURNAL, STATE_DIR, Session, Summary


def staged(base: Path, key: str) -> Path:
    folder = base / "staging" / key / "tasks" / "task-001-x"
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"x-generated": {"key": key}}))
    return folder


def session(into: Path, root: Path | None = None, stream=None) -> Session:
    (into / STATE_DIR).mkdir(parents=True, exist_ok=True)
    return Session(into, Summary("r", "history"), jobs=2, root=root, stream=stream or io.StringIO())


def test_kept_tasks_take_free_numbers_duplicates_and_crashes_are_reasons(tmp_path):
    into, root = tmp_path / "out", tmp_path / "suite"
    (root / "tasks" / "task-007-taken").mkdir(parents=True)

    def mine(key):
        if key == "boom":
            raise ValueError("bad blob")
        if key == "static":
            return Candidate(key, decide.NO_TEST_CHANGE, "none a test")
        found = Candidate(key, staged=staged(tmp_path, key), name=f"t-{key}",
                          duplicate_key="same" if key in ("a", "b") else key)
        return found

    stream = io.StringIO()
    summary = session(into, root, stream).run(["a", "b", "c", "boom", "static"], mine).to_json()
    assert summary["valid_tasks"] == 2 and summary["candidates"] == 4
    assert summary["rejected"] == {decide.DUPLICATE: 1, decide.CRASHED: 1,
                                   decide.NO_TEST_CHANGE: 1}
    crash = next(r for r in summary["rejections"] if r["reason"] == decide.CRASHED)
    assert crash["detail"] == "ValueError: bad blob"
    names = sorted(p.name for p in (into / "tasks").iterdir())
    assert [n[:8] for n in names] == ["task-008", "task-009"]
    assert "ETA" in stream.getvalue() and "[5/5]" in stream.getvalue()
    assert not (tmp_path / "staging" / "a").exists() and not (tmp_path / "staging" / "b").exists()


def test_resume_skips_journaled_candidates_and_recognises_a_task_placed_before_a_kill(tmp_path):
    into = tmp_path / "out"
    (into / STATE_DIR).mkdir(parents=True)
    (into / STATE_DIR / JOURNAL).write_text(
        json.dumps({"key": "old", "reason": decide.FLAKY, "detail": "f"}) + "\n"
        + '{"key": "cut-sh')  # the line a kill cut short: mined again
    placed = into / "tasks" / "task-001-placed"
    placed.mkdir(parents=True)
    (placed / "metadata.json").write_text(json.dumps({"x-generated": {"key": "placed"}}))
    mined = []

    def mine(key):
        mined.append(key)
        return Candidate(key, decide.NO_FAIL_TO_PASS)

    summary = session(into).run(["old", "placed", "cut-short"], mine).to_json()
    assert mined == ["cut-short"]
    assert summary["resumed"] == 2 and summary["tasks"] == [{"key": "placed",
                                                             "task": "task-001-placed"}]
    assert summary["tasks_per_minute"] == 0.0  # nothing new kept by this run
    lines = (into / STATE_DIR / JOURNAL).read_text().splitlines()
    assert json.loads(lines[-1])["key"] == "cut-short"
