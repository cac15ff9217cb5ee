"""`ci-eval import` end to end: the five-task fixture-json sample (validate and verify pass, the
original verifiers' wrong verdicts kept and warned about), the task-yaml sample (grade works),
numbering, skips, placeholders, and bad sources that write nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_eval.importers.base import file_patch, kebab
from ci_eval.importers.task_yaml import pytest_args

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_JSON = FIXTURES / "fixture-json-sample"
TASK_YAML = FIXTURES / "task-yaml-sample"
SLUG = TASK_YAML / "slugify-001-digits-and-hyphens"
FIVE = ["empty-reverse", "error-message-typo", "factorial-missing-return",
        "fizzbuzz-off-by-one", "linked-list-traversal"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The five-task sample imported into a repo whose tasks/ holds task-001 and whose
    archive/ holds task-003 (archived numbers stay taken)."""
    from harness_helpers import cli, write_task

    root = tmp_path_factory.mktemp("import") / "repo"
    write_task(root, "task-001-greet")
    (root / "archive" / "task-003-old").mkdir(parents=True)
    result = cli("import", "fixture-json", str(FIXTURE_JSON), "--into", str(root), "--json",
                 cwd=root)
    assert result.returncode == 0, result.stderr
    return root, json.loads(result.stdout)


def task_path(root: Path, source_id: str) -> Path:
    return next((root / "tasks").glob(f"task-*-{source_id}"))


def test_the_five_tasks_get_the_next_free_numbers(imported):
    root, report = imported
    assert [(t["task"], t["source_id"]) for t in report["imported"]] == [
        (f"task-{n:03d}-{name}", name) for n, name in zip(range(4, 9), FIVE)]
    assert report["skipped"] == []
    assert not list((root / "tasks").glob(".import-*"))


def test_the_report_warns_about_text_verifiers(imported, cli):
    _, report = imported
    assert any("false positives and false negatives" in w and "behaviour checks" in w
               for w in report["warnings"])
    by_id = {t["source_id"]: t for t in report["imported"]}
    assert any("judges text, not behaviour" in w for w in by_id["fizzbuzz-off-by-one"]["warnings"])
    assert not any("judges text" in w for w in by_id["empty-reverse"]["warnings"])


def test_text_output_shows_the_warning(tmp_path, cli):
    root = tmp_path / "repo"
    root.mkdir()
    result = cli("import", "fixture-json", FIXTURE_JSON / "fizzbuzz-off-by-one", "--into", root)
    assert result.returncode == 0, result.stderr
    assert "imported 1 task(s)" in result.stdout
    assert "task-001-fizzbuzz-off-by-one  <- fizzbuzz-off-by-one" in result.stdout
    assert "WARNING: text verifiers (file_equals, regex_match) have false positives" in result.stdout


def test_the_imported_tasks_are_native_and_keep_the_upstream_semantics(imported):
    root, _ = imported
    fizz = task_path(root, "fizzbuzz-off-by-one")
    assert (fizz / "repo-state" / "fizzbuzz.py").read_text().count("range(1, n)") == 1
    assert "regex_match('fizzbuzz.py', 'range\\\\(1, n \\\\+ 1\\\\)', flags=re.MULTILINE" in (
        fizz / "checks.py").read_text()
    typo = task_path(root, "error-message-typo")
    assert "ignore_trailing_newlines=True" in (typo / "checks.py").read_text()
    assert (typo / "expected" / "validate.py").is_file()
    reverse = task_path(root, "empty-reverse")
    assert "shell='sh'" in (reverse / "checks.py").read_text()
    metadata = json.loads((reverse / "metadata.json").read_text())
    assert metadata["x-imported-from"]["format"] == "fixture-json"
    assert metadata["x-imported-from"]["id"] == "empty-reverse"
    assert (reverse / "solution" / "fix.patch").read_text().startswith("diff --git a/reverse.py")


def test_validate_and_verify_pass_on_the_result(imported, cli):
    root, _ = imported
    validate = cli("validate", *[f"{n:03d}" for n in range(4, 9)], cwd=root)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    verify = cli("verify", *[f"{n:03d}" for n in range(4, 9)], cwd=root, timeout=600)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "5/5 tasks valid" in verify.stdout


def grade(cli, root: Path, task: Path, rel: str, new_text: str, tmp_path: Path) -> dict:
    old = (task / "repo-state" / rel).read_bytes()
    patch = tmp_path / f"{task.name}.patch"
    patch.write_text(file_patch({rel: old}, {rel: new_text.encode()}))
    result = cli("grade", task.name.split("-")[1], "--patch", patch, "--json", cwd=root,
                 timeout=180)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def behaviour(folder: Path, module: str, expression: str):
    code = f"import sys; sys.path.insert(0, {str(folder)!r}); import {module}; print({expression})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_correct_fix_without_spaces_fails_as_the_original_verifier_says(imported, cli, tmp_path):
    root, _ = imported
    task = task_path(root, "fizzbuzz-off-by-one")
    fixed = (task / "repo-state" / "fizzbuzz.py").read_text().replace("range(1, n)",
                                                                      "range(1, n+1)")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "fizzbuzz.py").write_text(fixed)
    assert behaviour(tmp_path / "mine", "fizzbuzz", "len(fizzbuzz.fizzbuzz(15))") == "15"
    data = grade(cli, root, task, "fizzbuzz.py", fixed, tmp_path)
    assert data["verdict"] == "FAIL"  # a false negative, kept: the original's verdict
    assert "no match for 'range\\\\(1, n \\\\+ 1\\\\)'" in data["checks"]["reason"]


def test_a_return_inside_the_loop_passes_as_the_original_verifier_says(imported, cli, tmp_path):
    root, _ = imported
    task = task_path(root, "factorial-missing-return")
    wrong = (task / "repo-state" / "factorial.py").read_text().replace(
        "        result *= i\n", "        result *= i\n        return result\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "factorial.py").write_text(wrong)
    assert behaviour(tmp_path / "mine", "factorial", "factorial.factorial(5)") == "2"  # wrong
    data = grade(cli, root, task, "factorial.py", wrong, tmp_path)
    assert data["verdict"] == "PASS"  # a false positive, kept: the original's verdict


def test_file_equals_ignores_trailing_newlines_as_upstream_does(imported, cli, tmp_path):
    root, _ = imported
    task = task_path(root, "error-message-typo")
    expected = (task / "expected" / "validate.py").read_text()
    assert grade(cli, root, task, "validate.py", expected.rstrip("\n"), tmp_path)["verdict"] == (
        "PASS")
    assert grade(cli, root, task, "validate.py", expected + "\n\n", tmp_path)["verdict"] == "PASS"


def test_importing_the_same_source_again_skips_it(imported, cli):
    root, _ = imported
    again = cli("import", "fixture-json", str(FIXTURE_JSON), "--json", cwd=root)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["imported"] == []
    assert [s["reason"] for s in report["skipped"]] == [
        f"already imported as task-{n:03d}-{name}" for n, name in zip(range(4, 9), FIVE)]


def fixture_task(folder: Path, task_id: str, verifier: dict, buggy: dict,
                 expected: dict | None = None) -> Path:
    task = folder / task_id
    (task / "buggy").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"id": task_id, "goal": f"Fix {task_id}.",
                                                "verifier": verifier}))
    for rel, text in buggy.items():
        (task / "buggy" / rel).write_text(text)
    for rel, text in (expected or {}).items():
        (task / "expected").mkdir(exist_ok=True)
        (task / "expected" / rel).write_text(text)
    return task


def test_no_expected_folder_leaves_a_placeholder_that_validate_flags(tmp_path, cli):
    src = tmp_path / "src"
    fixture_task(src, "needs-a-solution", {"name": "shell_exit_zero",
                                           "args": {"cmd": "test -s done.txt"}}, {"a.txt": "x\n"})
    fixture_task(src, "odd-one", {"name": "llm_judge", "args": {}}, {"a.txt": "x\n"})
    root = tmp_path / "repo"
    root.mkdir()
    result = cli("import", "fixture-json", src, "--into", root)
    assert result.returncode == 0, result.stderr
    assert "skipped 1:\n  odd-one: verifier 'llm_judge' has no ci-eval equivalent" in result.stdout
    assert ("still to write (`ci-eval validate` reports each until it is done):\n"
            "  task-001-needs-a-solution/solution/solve.sh: the source has no expected/ folder"
            in result.stdout)
    validate = cli("validate", cwd=root)
    assert validate.returncode == 2
    assert "solution/solve.sh: still the `ci-eval new-task` placeholder" in validate.stderr


def test_numbers_also_skip_baseline_entries(tmp_path, cli):
    root = tmp_path / "repo"
    (root / "tasks").mkdir(parents=True)
    bundled = json.loads((FIXTURES.parents[1] / "baseline.json").read_text())
    entry = next(iter(bundled["tasks"].values()))
    bundled["tasks"] = {"task-041-gone": entry}  # a task whose folder is gone
    (root / "baseline.json").write_text(json.dumps(bundled))
    result = cli("import", "fixture-json", FIXTURE_JSON / "empty-reverse", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["imported"][0]["task"] == "task-042-empty-reverse"


@pytest.mark.parametrize("break_it, needles", [
    (lambda t: (t / "task.json").write_text("{not json"), ["task.json", "invalid JSON"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "regex_match", "args": {"path": "a.py"}}})),
     ["task.json", "$.verifier.args.pattern", "required by regex_match"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "regex_match", "args": {"path": "a.py", "pattern": "("}}})),
     ["task.json", "$.verifier.args.pattern", "not a valid regular expression"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "file_equals", "args": {"path": "../etc/passwd"}}})),
     ["$.verifier.args.path", "relative path"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "shell_exit_zero", "args": {"argv": "python3 check.py"}}})),
     ["task.json", "$.verifier.args.argv", "non-empty list of non-empty strings"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "shell_exit_zero", "args": {"argv": ["python3", 3]}}})),
     ["task.json", "$.verifier.args.argv", "non-empty list"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "shell_exit_zero", "args": {"argv": ["true"], "timeout_seconds": "soon"}}})),
     ["task.json", "$.verifier.args.timeout_seconds", "float()"]),
    (lambda t: (t / "task.json").write_text(json.dumps({"id": "x", "goal": "g", "verifier": {
        "name": "shell_exit_zero", "args": {"timeout_seconds": 5}}})),
     ["task.json", "$.verifier.args.argv", "required by shell_exit_zero"]),
    (lambda t: (t / "buggy" / "link.py").symlink_to("/etc/hostname"),
     ["link.py", "symbolic link"]),
    (lambda t: shutil.rmtree(t / "expected"), ["expected/a.py is missing"]),
])
def test_a_bad_source_writes_nothing(tmp_path, cli, assert_bad_input, break_it, needles):
    src = tmp_path / "src"
    fixture_task(src, "good", {"name": "file_equals", "args": {"path": "a.py"}},
                 {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    bad = fixture_task(src, "zz-bad", {"name": "file_equals", "args": {"path": "a.py"}},
                       {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    break_it(bad)
    root = tmp_path / "repo"
    (root / "tasks").mkdir(parents=True)
    assert_bad_input(cli("import", "fixture-json", src, "--into", root), *needles)
    assert list((root / "tasks").iterdir()) == []


def test_an_unknown_source_folder_is_bad_input(tmp_path, cli, assert_bad_input):
    assert_bad_input(cli("import", "fixture-json", tmp_path / "nope", "--into", tmp_path),
                     "nope", "SRC", "no such folder")
    (tmp_path / "empty").mkdir()
    assert_bad_input(cli("import", "task-yaml", tmp_path / "empty", "--into", tmp_path),
                     "empty", "no task.yaml found")


# --- task-yaml ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slug_task(tmp_path_factory):
    from harness_helpers import cli

    root = tmp_path_factory.mktemp("yaml") / "repo"
    root.mkdir()
    result = cli("import", "task-yaml", str(TASK_YAML), "--into", str(root), "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    return root, root / "tasks" / report["imported"][0]["task"], report


def test_task_yaml_maps_every_part(slug_task):
    _, task, report = slug_task
    assert task.name == "task-001-slugify-001-digits-and-hyphens"
    metadata = json.loads((task / "metadata.json").read_text())
    assert metadata["difficulty"] == 2 and metadata["requires"] == ["pytest"]
    assert metadata["fail_to_pass"] == ["tests/test_slug.py::test_digits_are_kept",
                                        "tests/test_slug.py::test_cut_never_ends_in_a_hyphen"]
    assert len(metadata["pass_to_pass"]) == 4
    origin = metadata["x-imported-from"]
    assert origin["dockerfile"] == "environment/Dockerfile" and origin["title"]
    assert (task / "environment" / "Dockerfile").read_text().startswith("FROM python")
    assert (task / "solution" / "golden_patch.diff").read_text() == (
        SLUG / "golden_patch.diff").read_text()
    assert (task / "prompt.md").read_text().startswith('Our blog\'s URLs lose the numbers')
    assert (task / "repo-state" / "pytest.ini").is_file()
    assert "kind: required_pattern" in (task / "rubric.yaml").read_text()  # from type:
    assert "project_config=True, args=[]" in (task / "checks.py").read_text()
    assert metadata["docker"] == {"dockerfile": "environment/Dockerfile", "mount": "/workspace"}
    assert "runner" not in metadata  # local stays the default (seed 002); --runner docker uses it
    assert any("--runner docker" in w for w in report["imported"][0]["warnings"])


def test_task_yaml_import_validates_verifies_and_grades(slug_task, cli, tmp_path):
    root, task, _ = slug_task
    assert cli("validate", cwd=root).returncode == 0
    verify = cli("verify", cwd=root, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "FAIL    PASS    tests/test_slug.py::test_digits_are_kept" in verify.stdout
    golden = cli("grade", "1", "--patch", SLUG / "golden_patch.diff", "--json", cwd=root,
                 timeout=180)
    assert golden.returncode == 0, golden.stderr
    data = json.loads(golden.stdout)
    assert (data["verdict"], data["score"], data["tests_passed"], data["tests_total"]) == (
        "PASS", 100.0, 6, 6)
    tests = (task / "repo-state" / "tests" / "test_slug.py").read_text()
    tamper = tmp_path / "tamper.patch"
    tamper.write_text(file_patch({"tests/test_slug.py": tests.encode()}, {
        "tests/test_slug.py": tests.replace('"top-10-tips-for-2026"', '"top-tips-for"')
        .replace('== "abcd"', '== "abcd-"').encode()}))
    result = cli("grade", "1", "--patch", tamper, cwd=root, timeout=180)
    assert result.returncode == 1
    assert "tests: 6/6" in result.stdout and "verdict: FAIL" in result.stdout
    assert "auto-fail criteria tripped: no-test-edits" in result.stdout


def test_task_yaml_skips_a_command_that_is_not_pytest_and_refuses_bad_fields(
        tmp_path, cli, assert_bad_input):
    src = tmp_path / "src"
    shutil.copytree(SLUG, src / "a-task")
    text = (src / "a-task" / "task.yaml").read_text()
    (src / "a-task" / "task.yaml").write_text(text.replace(
        "python3 -m pytest -q --no-header -p no:cacheprovider", "make test"))
    root = tmp_path / "repo"
    root.mkdir()
    result = cli("import", "task-yaml", src, "--into", root, "--json")
    report = json.loads(result.stdout)
    assert report["imported"] == []
    assert "is not pytest" in report["skipped"][0]["reason"]
    (src / "a-task" / "task.yaml").write_text(text.replace(
        "  fail_to_pass:\n    - tests/test_slug.py::test_digits_are_kept\n"
        "    - tests/test_slug.py::test_cut_never_ends_in_a_hyphen\n", "  fail_to_pass: []\n"))
    assert_bad_input(cli("import", "task-yaml", src, "--into", root),
                     "task.yaml", "$.evaluation.fail_to_pass", "at least one test id")
    (src / "a-task" / "task.yaml").write_text(text)
    (src / "a-task" / "rubric.yaml").write_text("criteria:\n  - {id: x, kind: tests, tests: "
                                                "[tests/test_slug.py::nope], weight: 1, "
                                                "rationale: r}\n")
    assert_bad_input(cli("import", "task-yaml", src, "--into", root),
                     "the imported task would be invalid", "$.criteria[0].tests[0]")
    assert not (root / "tasks").exists() or list((root / "tasks").iterdir()) == []


@pytest.mark.parametrize("command, args", [
    ("python3 -m pytest -q --no-header -p no:cacheprovider", []),
    ("pytest -x tests/unit", ["-x", "tests/unit"]),
    ("/usr/bin/python3.12 -m pytest -pno:cacheprovider -k fast", ["-k", "fast"]),
    ("make test", None),
    ("python3 -m unittest", None),
])
def test_pytest_args(command, args):
    assert pytest_args(command) == args


def test_kebab_names():
    assert kebab("FizzBuzz_off by 1") == "fizzbuzz-off-by-1"
    assert kebab("!!!") == "imported"
