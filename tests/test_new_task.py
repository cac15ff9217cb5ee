"""Failure log -> task: the schema, `ci-eval new-task` (from a log and from the template), the
placeholders `validate` reports, `--list-logs`, numbering, and one end-to-end run to `verify`."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest

from ci_eval.tasks import scaffold

REPO = Path(__file__).resolve().parents[1]

LOG = {
    "observed_at": "2026-06-10T14:23:00Z",
    "task_description": "Make greet.txt say hello.",
    "agent_output": "It wrote 'Hello!' with a capital and an exclamation mark.",
    "expected_behavior": "greet.txt holds exactly one line: hello",
    "repo_state_description": "A greet.txt that says bye.",
    "affected_area": "greetings",
    "tags": ["text", "exact-output"],
}


def write_log(root: Path, name: str = "2026-06-10-greet.json", folder=".ci-eval/failure-logs",
              **changes) -> Path:
    path = root / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**LOG, **changes}) if "raw" not in changes else changes["raw"])
    return path


def test_failure_log_to_a_verified_task_end_to_end(repo_root, cli):
    log = write_log(repo_root)
    listed = cli("new-task", "--list-logs", cwd=repo_root)
    assert listed.returncode == 0, listed.stderr
    assert "1 failure log(s), 1 not yet turned into a task" in listed.stdout

    created = cli("new-task", "greet-exactly", "--from-failure-log", log.relative_to(repo_root),
                  "--today", "2026-06-11", "--json", cwd=repo_root)
    assert created.returncode == 0, created.stderr
    out = json.loads(created.stdout)
    task = repo_root / "tasks" / "task-001-greet-exactly"
    assert out["task"] == task.name and out["failure_log"] == ".ci-eval/failure-logs/" + log.name
    assert (task / "prompt.md").read_text() == ("Make greet.txt say hello.\n\n"
                                                "greet.txt holds exactly one line: hello\n")
    metadata = json.loads((task / "metadata.json").read_text())
    assert metadata == {"difficulty": 3, "area": "greetings", "tags": ["text", "exact-output"],
                        "created": "2026-06-11",
                        "x-failure-log": ".ci-eval/failure-logs/2026-06-10-greet.json",
                        "x-failure-observed-at": "2026-06-10T14:23:00Z"}
    assert "# It wrote 'Hello!' with a capital" in (task / "checks.py").read_text()
    assert "A greet.txt that says bye." in (task / "repo-state/CI-EVAL-PLACEHOLDER.md").read_text()

    flagged = cli("validate", cwd=repo_root)
    assert flagged.returncode == 2
    assert "task-001-greet-exactly: invalid (3 problems)" in flagged.stdout
    problems = flagged.stderr.splitlines()
    assert len(problems) == 3 and all("still the `ci-eval new-task` placeholder" in line
                                      for line in problems)
    for part in ("checks.py", "solution/solve.sh", "repo-state/CI-EVAL-PLACEHOLDER.md"):
        assert any(line.startswith(str(Path("tasks") / task.name / part) + ":") or
                   f"{task.name}/{part}:" in line for line in problems), part
    after = cli("new-task", "--list-logs", "--json", cwd=repo_root)
    data = json.loads(after.stdout)
    assert data["not_turned"] == [] and data["logs"][0]["turned_into"] == task.name

    # fill in: the fixture, checks and a solution (and a negative from agent_output)
    (task / "repo-state" / "CI-EVAL-PLACEHOLDER.md").unlink()
    (task / "repo-state" / "greet.txt").write_text("bye\n")
    (task / "checks.py").write_text('from ci_eval.checks import file_equals, main\n\n'
                                    'main(file_equals("greet.txt", "hello\\n"))\n')
    (task / "solution" / "solve.sh").write_text("#!/bin/sh\nprintf 'hello\\n' > greet.txt\n")
    (task / "negatives").mkdir()
    (task / "negatives" / "capitalised.sh").write_text("printf 'Hello!\\n' > greet.txt\n")
    valid = cli("validate", cwd=repo_root)
    assert valid.returncode == 0, valid.stderr
    verified = cli("verify", "task-001", cwd=repo_root, timeout=180)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1/1 tasks valid" in verified.stdout


def test_the_template_without_a_log(repo_root, cli):
    result = cli("new-task", "blank-slate", "--today", "2026-07-01", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    task = repo_root / "tasks" / "task-001-blank-slate"
    assert "created " in result.stdout and "from the template" in result.stdout
    assert sorted(str(p.relative_to(task)) for p in task.rglob("*") if p.is_file()) == [
        "checks.py", "metadata.json", "prompt.md", "repo-state/CI-EVAL-PLACEHOLDER.md",
        "solution/solve.sh"]
    assert json.loads((task / "metadata.json").read_text())["created"] == "2026-07-01"
    assert (task / "solution" / "solve.sh").stat().st_mode & 0o111
    assert "{{" not in "".join(p.read_text() for p in task.rglob("*") if p.is_file())
    flagged = cli("validate", cwd=repo_root)
    assert flagged.returncode == 2 and "invalid (5 problems)" in flagged.stdout
    assert "metadata.json: $.x-ci-eval-placeholder: still the `ci-eval new-task` placeholder" \
        in flagged.stderr
    assert "prompt.md: still the `ci-eval new-task` placeholder" in flagged.stderr
    # the template is a loadable task (so run/verify say what is wrong, instead of crashing)
    listed = cli("list", cwd=repo_root)
    assert listed.returncode == 0 and "task-001-blank-slate" in listed.stdout


def test_next_number_counts_archived_tasks_and_baseline_entries(repo_root, cli, make_task):
    make_task(repo_root, "task-002-here")
    archived = repo_root / "archive" / "task-007-archived"
    archived.mkdir(parents=True)
    assert scaffold.next_number(repo_root) == 8
    (repo_root / "baseline.json").write_text(json.dumps({
        "schema_version": 2, "agent": "ref", "tasks": {"task-011-deleted": {
            "passes": 5, "runs": 5, "pass_rate": 1.0, "recorded": "2026-01-01",
            "prompt_hash": "sha256:" + "0" * 64}}}))
    result = cli("new-task", "after-them", "--json", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["task"] == "task-012-after-them"
    assert scaffold.next_number(repo_root / "nothing-here") == 1


def test_the_failure_logs_folder_is_configurable(repo_root, cli):
    (repo_root / "ci-eval.yaml").write_text("failure_logs: incidents\n")
    write_log(repo_root, folder="incidents")
    write_log(repo_root, folder=".ci-eval/failure-logs", name="elsewhere.json")
    (repo_root / "incidents" / "README.md").write_text("not a log: left alone")
    result = cli("new-task", "--list-logs", cwd=repo_root)
    assert result.returncode == 0, result.stderr
    assert "incidents: 1 failure log(s), 1 not yet turned into a task" in result.stdout
    assert "elsewhere.json" not in result.stdout
    (repo_root / "ci-eval.yaml").write_text("failure_logs: [a, b]\n")
    bad = cli("new-task", "--list-logs", cwd=repo_root)
    assert bad.returncode == 2 and "ci-eval.yaml: failure_logs: expected a folder path" \
        in bad.stderr


def test_no_logs_folder_lists_nothing(repo_root, cli):
    result = cli("new-task", "--list-logs", cwd=repo_root)
    assert result.returncode == 0 and "0 failure log(s)" in result.stdout


@pytest.mark.parametrize(("args", "needles"), [
    (["Not_Kebab"], ["NAME", "kebab-case"]),
    (["task-004-greet"], ["NAME", "without task-NNN-", "'greet'"]),
    ([], ["NAME", "--list-logs"]),
    (["x", "--list-logs"], ["--list-logs takes no NAME"]),
    (["x", "--today", "2026-02-30"], ["--today"]),
    (["x", "--from-failure-log", "missing.json"], ["missing.json", "cannot read"]),
])
def test_bad_arguments(repo_root, cli, assert_bad_input, args, needles):
    assert_bad_input(cli("new-task", *args, cwd=repo_root), *needles)
    assert list((repo_root / "tasks").iterdir()) == []


@pytest.mark.parametrize(("changes", "needles"), [
    ({"tags": "hooks"}, ["$.tags", "list"]),
    ({"observed_at": "last tuesday"}, ["$.observed_at", "ISO 8601"]),
    ({"observed_at": "2026-02-30T10:00:00Z"}, ["$.observed_at", "ISO 8601"]),
    ({"task_description": ""}, ["$.task_description", "non-empty string"]),
    ({"severity": "high"}, ["$.severity", "unknown field"]),
    ({"raw": '{"observed_at": "2026-01-01", "observed_at": "x"}'}, ["duplicate key"]),
    ({"raw": "[1, 2"}, ["invalid JSON"]),
])
def test_a_bad_failure_log_is_bad_input_naming_the_field(repo_root, cli, assert_bad_input,
                                                         changes, needles):
    log = write_log(repo_root, **changes)
    assert_bad_input(cli("new-task", "x", "--from-failure-log", log, cwd=repo_root),
                     log.name, *needles)
    assert list((repo_root / "tasks").iterdir()) == []
    assert_bad_input(cli("new-task", "--list-logs", cwd=repo_root), log.name, *needles)


def test_missing_log_fields_and_x_keys(repo_root, cli, assert_bad_input):
    data = dict(LOG)
    del data["repo_state_description"]
    log = write_log(repo_root, raw=json.dumps(data))
    assert_bad_input(cli("new-task", "x", "--from-failure-log", log, cwd=repo_root),
                     "$.repo_state_description", "required field is missing")
    log = write_log(repo_root, **{"x-session": "abc", "observed_at": "2026-06-10"})
    assert cli("new-task", "x", "--from-failure-log", log, cwd=repo_root).returncode == 0


def test_one_failure_one_task(repo_root, cli, assert_bad_input):
    log = write_log(repo_root)
    assert cli("new-task", "first", "--from-failure-log", log, cwd=repo_root).returncode == 0
    assert_bad_input(cli("new-task", "second", "--from-failure-log", log, cwd=repo_root),
                     "already turned into task-001-first")


def test_the_schema_is_printable(cli):
    result = cli("schema", "failure-log")
    assert result.returncode == 0 and json.loads(result.stdout)["required"] == list(LOG)
    assert "failure-log" in cli("schema").stdout.split()
    assert "run-summary" in cli("schema").stdout.split()


def test_fill_slots():
    text = "# {{a}}\nsay {{b}} now\n{{a}}\n{{unknown}}\n"
    assert scaffold.fill(text, {"a": "one\ntwo", "b": "x\ny"}) == \
        "# one\n# two\nsay x y now\none\ntwo\n{{unknown}}\n"


def test_the_template_is_package_data():
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["ci_eval"]
    # __pycache__ aside, as new-task copies it (pip compiles an installed template's checks.py)
    files = [p.relative_to(REPO / "ci_eval").as_posix()
             for p in scaffold.template_dir().rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert files and all(any(fnmatch.fnmatch(f, pattern) and f.count("/") == pattern.count("/")
                             for pattern in patterns) for f in files), files
