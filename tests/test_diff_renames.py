"""Renames in the recorded diff (run/workspace/diff.py + run/workspace/renames.py) and how the rubric counts them:
a pure rename is 1 file and 0 lines, a rename with edits counts only the edited lines."""

from __future__ import annotations

import subprocess

import pytest

from ci_eval.grading.diffview import added_lines, files_in
from ci_eval.grading.rubric import rubric_from_data
from ci_eval.grading.score import score
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.run.workspace.renames import MAX_CANDIDATE_PAIRS, pair_renames

BODY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(29))  # 116 lines


def trees(tmp_path, before: dict, after: dict):
    for root, files in (("a", before), ("b", after)):
        for rel, text in files.items():
            path = tmp_path / root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    return workspace_diff(tmp_path / "a", tmp_path / "b")


def sizes(diff):
    r = rubric_from_data({"pass_threshold": 0, "criteria": [
        {"id": "files", "kind": "max_files_changed", "weight": 1, "max": 1, "rationale": "r"},
        {"id": "lines", "kind": "max_lines_changed", "weight": 1, "max": 0, "rationale": "r"}]}, source="r.yaml")
    return [c.reason for c in score(r, {}, diff).criteria]


def test_a_pure_rename_is_one_file_and_no_lines(tmp_path):
    diff = trees(tmp_path, {"src/util.py": BODY, "keep.txt": "k\n"},
                 {"src/helpers.py": BODY, "keep.txt": "k\n"})
    (change,) = diff.files
    assert (change.status, change.old_path, change.path) == ("renamed", "src/util.py",
                                                             "src/helpers.py")
    assert sizes(diff)[0].startswith("1 file(s) changed") and sizes(diff)[1].startswith("0 line")
    assert diff.text == ("diff --git a/src/util.py b/src/helpers.py\nsimilarity index 100%\n"
                         "rename from src/util.py\nrename to src/helpers.py\n")


def test_a_rename_with_edits_counts_only_the_edited_lines(tmp_path):
    edited = BODY.replace("return x + 3\n", "return x + 300\n")
    diff = trees(tmp_path, {"src/util.py": BODY}, {"src/helpers.py": edited})
    (change,) = diff.files
    assert change.status == "renamed" and (change.added, change.removed) == (1, 1)
    assert "rename from src/util.py\nrename to src/helpers.py\n--- a/src/util.py\n" \
           "+++ b/src/helpers.py\n" in diff.text
    assert added_lines(diff.text) == [("src/helpers.py", "    return x + 300")]


def test_what_git_calls_a_rename_is_one_here_too(tmp_path):
    """The pairing agrees with git's own rename detection on the same two trees."""
    edited = BODY.replace("return x + 3\n", "return x + 300\n")
    other = "".join(f"line {i}\n" for i in range(40))
    diff = trees(tmp_path, {"a.py": BODY, "b.txt": other, "c.txt": "short\n"},
                 {"moved/a.py": edited, "b2.txt": other, "d.txt": "unrelated\n"})
    git = ["git", "-c", "core.quotepath=off", "diff", "--no-index", "-M", "--name-status",
           str(tmp_path / "a"), str(tmp_path / "b")]
    out = subprocess.run(git, capture_output=True, text=True, check=False).stdout
    git_renames = sorted(line.split("\t")[2].rsplit("/b/", 1)[1]
                         for line in out.splitlines() if line.startswith("R"))
    ours = sorted(f.path for f in diff.files if f.status == "renamed")
    assert ours == git_renames == ["b2.txt", "moved/a.py"]
    assert sorted((f.status, f.path) for f in diff.files if f.status != "renamed") == [
        ("added", "d.txt"), ("deleted", "c.txt")]


def test_a_rewrite_under_a_new_name_is_not_a_rename(tmp_path):
    diff = trees(tmp_path, {"old.py": BODY}, {"new.py": "print('something else')\n" * 3})
    assert sorted(f.status for f in diff.files) == ["added", "deleted"]


def test_moving_a_test_out_of_tests_still_touches_tests(tmp_path):
    diff = trees(tmp_path, {"tests/test_x.py": BODY}, {"attic/test_x.py": BODY})
    assert [f.path for f in files_in(diff, ["tests/**"])] == ["attic/test_x.py"]


def test_many_deletions_and_additions_stay_bounded():
    side = int(MAX_CANDIDATE_PAIRS ** 0.5) + 1
    old = {f"o{i}": f"old {i}\n" * 3 for i in range(side)}
    new = {f"n{i}": f"old {i}\n" * 2 + "x\n" for i in range(side)}
    new["same"] = old["o0"]
    assert pair_renames(old, new) == [("o0", "same")]  # exact pairs only past the bound


@pytest.mark.parametrize(("old", "new", "paired"), [
    ({"a": "1\n2\n3\n4\n"}, {"b": "1\n2\n3\nX\n"}, True),  # 75% common
    ({"a": "1\n2\n3\n4\n"}, {"b": "1\nX\nY\nZ\n"}, False),  # 25%
    ({"a": "x\n", "b": "x\n"}, {"c": "x\n"}, True),  # two identical: the first by path
])
def test_pairing(old, new, paired):
    assert bool(pair_renames(old, new)) is paired
