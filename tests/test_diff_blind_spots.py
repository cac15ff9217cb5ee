"""What the diff could not see, on real trees, and how the rubric judges it: unproven is fail.

The CLI attacks (latin-1 cookie, fullwidth letters, a file over 1 MiB, 257 files of 1 MiB) are
in tests/adversarial/test_rubric_blind_spots.py; here the same rules on workspace_diff and score
directly, with the budgets shrunk so that each blind spot is cheap to build.
"""

from __future__ import annotations

from pathlib import Path

from ci_eval.grading.rubric import rubric_from_data
from ci_eval.grading.score import score
from ci_eval.run.workspace import diff as diff_mod
from ci_eval.run.workspace.diff import workspace_diff
from ci_eval.run.workspace.sourcetext import source_lines, source_text

PASSED = {"t.py::test_a": "PASSED"}


def _rubric(*criteria):
    return rubric_from_data({"fail_to_pass": ["t.py::test_a"], "pass_threshold": 100,
                             "criteria": [{"id": "tests", "kind": "tests", "weight": 1,
                                           "rationale": "r", "tests": ["t.py::test_a"]},
                                          *criteria]}, source="r.yaml")


def _c(ident, kind, **fields):
    return {"id": ident, "kind": kind, "weight": 1, "rationale": "why", **fields}


NO_TESTS = _c("no-tests", "forbidden_paths", paths=["tests/**"])
NO_ABS = _c("no-abs", "forbidden_pattern", pattern=r"\babs\s*\(", paths=["src/**"])
HAS_MAX = _c("has-max", "required_pattern", pattern=r"\bmax\(", paths=["src/**"])
SMALL = _c("small", "max_lines_changed", max=20, paths=["src/**"])
FEW = _c("few", "max_files_changed", max=2)


def _trees(tmp_path: Path, before: dict, after: dict) -> tuple[Path, Path]:
    roots = []
    for name, files in (("pristine", before), ("workspace", after)):
        root = tmp_path / name
        root.mkdir()
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        roots.append(root)
    return roots[0], roots[1]


def _judged(diff, *criteria) -> dict:
    result = score(_rubric(*criteria), PASSED, diff)
    return {c.id: (c.passed, c.reason) for c in result.criteria}


BASE = {"src/p.py": "def f(x):\n    return x\n", "tests/t.py": "def test_a():\n    pass\n"}


def test_a_same_size_test_edit_left_uncompared_by_the_budget_fails_the_path_gate(tmp_path):
    """The budget runs out before the same-size edit of tests/t.py is compared: it may have
    changed, so forbidden_paths fails; with the budget it needs, the edit is seen."""
    after = {**BASE, "tests/t.py": "def test_a():\n    PASS\n"}
    pristine, workspace = _trees(tmp_path, BASE, after)
    starved = workspace_diff(pristine, workspace, byte_budget=10)
    assert starved.unverified == ["src/p.py", "tests/t.py"] and starved.files == []
    judged = _judged(starved, NO_TESTS, NO_ABS, FEW)
    assert judged["no-tests"] == (False, ("protected path(s) may have changed and were not "
                                          "compared (the diff's budget ran out before they "
                                          "were compared): tests/t.py"))
    assert judged["no-abs"][0] is False and "src/p.py (may have changed" in judged["no-abs"][1]
    assert judged["few"] == (True, "0 file(s) changed (at most 2)")  # 2 unverified <= 2
    full = workspace_diff(pristine, workspace)
    assert [f.path for f in full.files] == ["tests/t.py"] and full.unverified == []
    assert _judged(full, NO_TESTS)["no-tests"] == (
        False, "patch modifies protected path(s): tests/t.py")


def test_files_of_another_size_are_listed_even_when_no_content_is_read(tmp_path):
    """257 files of 1 MiB sorted before tests/: the changed-path list is complete, and the
    contents the budget skipped are said per file."""
    after = {**BASE, "tests/t.py": "def test_a():\n    assert True\n",
             **{f"aaa/{i}.txt": "a" * 1000 for i in range(5)}}
    pristine, workspace = _trees(tmp_path, BASE, after)
    diff = workspace_diff(pristine, workspace, byte_budget=2500)
    assert [f.path for f in diff.files] == [*(f"aaa/{i}.txt" for i in range(5)), "tests/t.py"]
    assert diff.files[-1].unread == "not read: the diff's read budget of 0 MiB used up"
    assert "diff incomplete: read budget of 0 MiB used up" in diff.notes[0]
    assert _judged(diff, NO_TESTS)["no-tests"][0] is False


def test_a_path_list_cut_at_the_entry_cap_fails_every_criterion_on_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(diff_mod, "MAX_ENTRIES", 50)
    after = {**BASE, **{f"aaa/{i}": "" for i in range(60)}}
    pristine, workspace = _trees(tmp_path, BASE, after)
    diff = workspace_diff(pristine, workspace)
    assert diff.unlisted == "more than 50 paths"
    judged = _judged(diff, NO_TESTS, NO_ABS, FEW, SMALL)
    assert judged["no-tests"] == (False, ("the list of changed paths is incomplete (more "
                                          "than 50 paths): a change to a protected path "
                                          "cannot be ruled out"))
    assert all(judged[k][0] is False for k in ("no-abs", "few", "small")), judged
    # pristine paths not reached in the workspace are not called deleted
    assert not any(f.status == "deleted" for f in diff.files)


def test_binary_and_undecodable_files_in_scope_trip_the_line_criteria(tmp_path):
    after = {**BASE, "src/p.py": "def f(x):\n    return max(0, x)\n",
             "src/_fast.so": b"\x7fELF\0\0abs(", "src/notes.py": b"x = '\xe9'\n"}
    pristine, workspace = _trees(tmp_path, BASE, after)
    diff = workspace_diff(pristine, workspace)
    unread = {f.path: f.unread for f in diff.files if f.unread}
    assert unread == {"src/_fast.so": "binary (NUL bytes)",
                      "src/notes.py": "not readable as Python reads it: invalid or missing "
                                      "encoding declaration"}
    judged = _judged(diff, NO_ABS, HAS_MAX, SMALL)
    assert judged["no-abs"][0] is False
    assert "src/_fast.so (binary (NUL bytes))" in judged["no-abs"][1]
    assert judged["has-max"][0] is True  # found: a required pattern that is seen passes
    assert judged["small"][0] is False and "lines not counted" in judged["small"][1]


def test_a_deleted_binary_file_adds_no_line_but_its_lines_cannot_be_counted(tmp_path):
    before = {**BASE, "src/blob.bin": b"\0\1\2"}
    pristine, workspace = _trees(tmp_path, before, BASE)
    judged = _judged(workspace_diff(pristine, workspace), NO_ABS, SMALL)
    assert judged["no-abs"] == (True, r"no added line matches /\babs\s*\(/")
    assert judged["small"][0] is False and "src/blob.bin (binary" in judged["small"][1]


def test_lines_are_split_where_python_splits_them(tmp_path):
    """`abs\\f(x)` is one line to Python (a form feed is whitespace); str.splitlines would cut
    it in two and the pattern would miss it."""
    after = {**BASE, "src/p.py": "def f(x):\n    return abs\x0c(x)\n"}
    pristine, workspace = _trees(tmp_path, BASE, after)
    assert _judged(workspace_diff(pristine, workspace), NO_ABS)["no-abs"][0] is False
    assert source_lines("a\rb\r\nc\x0cd\u2028e\nf") == ["a\r", "b\r\n", "c\x0cd\u2028e\n", "f"]


def test_source_text_reads_as_python_does():
    assert source_text("# coding: latin-1\nx = 'é'\n".encode("latin-1")) == (
        "# coding: latin-1\nx = 'é'\n", "")
    assert source_text(b"\xef\xbb\xbfx = 1\n") == ("x = 1\n", "")
    assert source_text(b"# coding: utf-7\nx = +AGE-bs(1)\n")[0].endswith("abs(1)\n")
    assert source_text(b"# coding: rot13\nnof(1)\n") == (
        None, "declares rot13, which is not a text encoding")
    assert source_text(b"# coding: nonesuch\n")[0] is None
    assert source_text(b"x = 1\n\0") == (None, "binary (NUL bytes)")


def test_fullwidth_identifiers_match_a_code_pattern(tmp_path):
    pristine, workspace = _trees(tmp_path, BASE, {**BASE, "src/p.py": "x = ａｂｓ(-1)\n"})
    judged = _judged(workspace_diff(pristine, workspace), NO_ABS)
    assert judged["no-abs"][0] is False and "ａｂｓ" in judged["no-abs"][1]


def test_a_link_in_scope_trips_the_line_criteria(tmp_path):
    """src/p.py made a link to code outside the criterion's paths: Python imports the target's
    lines, which the pattern on src/** never reads."""
    pristine, workspace = _trees(tmp_path, BASE, {**{k: v for k, v in BASE.items()
                                                      if k != "src/p.py"},
                                                   "elsewhere/impl.py": "f = abs\n"})
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "p.py").symlink_to("../elsewhere/impl.py")
    diff = workspace_diff(pristine, workspace)
    link = next(f for f in diff.files if f.path == "src/p.py")
    assert link.unread.startswith("a symbolic link (to '../elsewhere/impl.py')")
    assert "+../elsewhere/impl.py" in diff.text  # shown as git shows a link
    judged = _judged(diff, NO_ABS, SMALL)
    assert judged["no-abs"][0] is False and "src/p.py (a symbolic link" in judged["no-abs"][1]
    assert judged["small"][0] is False


def test_the_files_the_cap_cut_are_the_ones_a_pattern_could_not_read(tmp_path):
    """The diff says which files' text the cap cut (text_cut), from where it cut them: the
    files recorded whole before it are read as usual, a renamed one included; the cut ones
    fail an absence pattern."""
    before = {"src/a.py": "x = 1\n", "src/m.py": "m = 1\n", "src/z.py": "z = 1\n"}
    after = {"src/a.py": "x = 2\n", "src/moved.py": "m = 1\n", "src/z.py": "z = abs(-1)\n" * 40}
    pristine, workspace = _trees(tmp_path, before, after)
    whole = workspace_diff(pristine, workspace)
    cap = whole.text.index("diff --git a/src/z.py") + 40
    diff = workspace_diff(pristine, workspace, cap=cap)
    assert diff.truncated and diff.text_cut == ["src/z.py"]
    assert [f.path for f in diff.files] == ["src/a.py", "src/moved.py", "src/z.py"]
    passed, reason = _judged(diff, NO_ABS)["no-abs"]
    assert passed is False and "src/z.py (its diff text was cut)" in reason
    assert "src/a.py" not in reason and "src/moved.py" not in reason
    assert workspace_diff(pristine, workspace).text_cut == []
