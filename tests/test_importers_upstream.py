"""fixture-json fidelity to the original harness (main.py of the fixture-task lesson): fixtures of
our own in its layout (tests/fixtures/fixture-json-upstream: code/tasks/task_NNN_name/ with
task.json, buggy/, expected/), imported, pass `verify`, and every candidate fix gets the verdict
the original gives it: regex_match with re.MULTILINE, file_equals with and without
normalize_trailing_newline (the string "false" read as Python's bool() reads it), shell_exit_zero
with argv (no shell), text-mode reads (\\r\\n is \\n). `upstream_verdict` below restates the
original's verifiers from its source, so each expected verdict is computed twice."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_eval.importers.base import file_patch

SRC = Path(__file__).resolve().parent / "fixtures" / "fixture-json-upstream"
CANDIDATES = json.loads((SRC / "candidates.json").read_text())["verdicts"]
NAMES = {"task_001_median_even_length": "median-even-length",
         "task_002_ini_section_exact": "ini-section-exact",
         "task_003_flag_given_as_text": "flag-given-as-text",
         "task_004_clamp_missing_return": "clamp-missing-return",
         "task_005_slug_argv_no_shell": "slug-argv-no-shell"}


def upstream_verdict(task: Path, scratch: Path) -> str:
    """The original's verdict for the workspace `scratch` (its three verifiers, restated)."""
    spec = json.loads((task / "task.json").read_text())
    name, args = spec["verifier"]["name"], spec["verifier"].get("args", {})

    def text(path: Path) -> str:
        with open(path, encoding="utf-8") as handle:  # text mode: \r\n and \r read as \n
            return handle.read()

    if name == "file_equals":
        actual, expected = scratch / args["path"], task / "expected" / args["path"]
        if not actual.is_file() or not expected.is_file():
            return "FAIL"
        a, b = text(actual), text(expected)
        if bool(args.get("normalize_trailing_newline", True)):
            a, b = a.rstrip("\n") + "\n", b.rstrip("\n") + "\n"
        return "PASS" if a == b else "FAIL"
    if name == "regex_match":
        target = scratch / args["path"]
        ok = target.is_file() and re.search(args["pattern"], text(target), re.MULTILINE)
        return "PASS" if ok else "FAIL"
    argv = args.get("argv")
    if not isinstance(argv, list) or not argv:
        return "FAIL"
    try:
        proc = subprocess.run(argv, cwd=scratch, capture_output=True, check=False,
                              timeout=float(args.get("timeout_seconds", 10.0)))
    except (subprocess.TimeoutExpired, FileNotFoundError):
        return "FAIL"
    return "PASS" if proc.returncode == 0 else "FAIL"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    from harness_helpers import cli

    root = tmp_path_factory.mktemp("upstream") / "repo"
    (root / "tasks").mkdir(parents=True)
    result = cli("import", "fixture-json", str(SRC / "tasks"), "--into", str(root), "--json",
                 cwd=root)
    assert result.returncode == 0, result.stderr
    return root, json.loads(result.stdout)


def test_folder_names_do_not_repeat_the_task_number(imported):
    root, report = imported
    assert [t["task"] for t in report["imported"]] == [
        f"task-{n:03d}-{name}" for n, name in enumerate(NAMES.values(), start=1)]
    assert sorted(p.name for p in (root / "tasks").iterdir()) == [
        t["task"] for t in report["imported"]]


def test_the_checks_carry_the_upstream_arguments(imported):
    root, _ = imported
    checks = {t: (root / "tasks" / f"task-{n:03d}-{name}" / "checks.py").read_text()
              for n, (t, name) in enumerate(NAMES.items(), start=1)}
    assert "ignore_trailing_newlines=True, universal_newlines=True" in checks[
        "task_001_median_even_length"]
    assert "ignore_trailing_newlines=False" in checks["task_002_ini_section_exact"]
    assert "ignore_trailing_newlines=True" in checks["task_003_flag_given_as_text"]
    assert "'greeting.txt', task_dir() / 'expected' / 'greeting.txt'" in checks[
        "task_003_flag_given_as_text"]
    assert "flags=re.MULTILINE" in checks["task_004_clamp_missing_return"]
    assert ("shell_exit_zero(['python3', 'check_slug.py', 'Hello World; exit 0', "
            "'hello-world-exit-0'], timeout=20.0)") in checks["task_005_slug_argv_no_shell"]


def test_arguments_read_otherwise_than_they_look_are_warned_about(imported):
    _, report = imported
    warnings = {t["source_id"]: " | ".join(t["warnings"]) for t in report["imported"]}
    flag = warnings["task_003_flag_given_as_text"]
    assert "normalize_trailing_newline is \"false\"" in flag and "bool('false') = True" in flag
    assert "argument 'expected' is not one file_equals reads" in flag
    assert "timeout_seconds is the string '20'" in warnings["task_005_slug_argv_no_shell"]
    assert "sh -c" not in warnings["task_005_slug_argv_no_shell"]


def test_verify_passes_on_every_imported_task(imported, cli):
    root, _ = imported
    verify = cli("verify", cwd=root, timeout=600)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "5/5 tasks valid" in verify.stdout


def candidate_cases():
    for task, verdicts in CANDIDATES.items():
        for candidate, verdict in verdicts.items():
            yield pytest.param(task, candidate, verdict, id=f"{task}-{candidate}")


@pytest.mark.parametrize(("task", "candidate", "verdict"), list(candidate_cases()))
def test_each_candidate_gets_the_upstream_verdict(imported, cli, tmp_path, task, candidate,
                                                  verdict):
    root, _ = imported
    source = SRC / "tasks" / task
    (replacement,) = (SRC / "candidates" / task / candidate).iterdir()
    scratch = tmp_path / "scratch"
    shutil.copytree(source / "buggy", scratch)
    shutil.copy(replacement, scratch / replacement.name)
    assert upstream_verdict(source, scratch) == verdict  # the original's verdict, restated

    rel = replacement.name
    old = (source / "buggy" / rel).read_bytes()
    patch = tmp_path / "candidate.patch"
    patch.write_text(file_patch({rel: old}, {rel: replacement.read_bytes()}), newline="")
    number = list(CANDIDATES).index(task) + 1
    result = cli("grade", f"{number:03d}", "--patch", patch, "--json", cwd=root, timeout=180)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["verdict"] == verdict, result.stdout
