"""Bad input through the real CLI: exit 2, one stderr line naming the file and the field, no
traceback. Task problems go through `list` (the strict load path every command shares) or
`validate`; ci-eval.yaml problems through `validate`."""

from __future__ import annotations

import json

import pytest

META = "tasks/task-001-example/metadata.json"
VALID_META = '{"difficulty": 2, "area": "x", "tags": [], "created": "2026-01-01"'  # open: add "}"


METADATA_CASES = [
    ({"difficulty": "hard"}, ["$.difficulty", 'expected integer 1-5, got "hard"']),
    ({"difficulty": 6}, ["$.difficulty", "expected integer 1-5, got 6"]),
    ({"difficulty": 0}, ["$.difficulty", "got 0"]),
    ({"difficulty": 2.5}, ["$.difficulty", "got 2.5"]),
    ({"difficulty": True}, ["$.difficulty", "got true"]),
    ({"created": "2026-02-30"}, ["$.created", "expected date YYYY-MM-DD", '"2026-02-30"']),
    ({"created": "15/01/2026"}, ["$.created", "expected date YYYY-MM-DD"]),
    ({"created": 20260115}, ["$.created", "got 20260115"]),
    ({"area": ""}, ["$.area", "non-empty string"]),
    ({"area": ["hooks"]}, ["$.area", "expected non-empty string"]),
    ({"tags": "ruff"}, ["$.tags", "expected list of strings", '"ruff"']),
    ({"tags": ["ok", 3]}, ["$.tags[1]", "got 3"]),
    ({"tags": ["a", "a"]}, ["$.tags", "unique"]),
    (
        {"human_label": {"expected_pass_rate": 1.5}},
        ["$.human_label.expected_pass_rate", "expected number 0-1, got 1.5"],
    ),
    (
        {"human_label": {"expected_pass_rate": -0.1}},
        ["$.human_label.expected_pass_rate", "got -0.1"],
    ),
    ({"human_label": {"labeled_by": "ann"}}, ["$.human_label.expected_pass_rate", "missing"]),
    (
        {"human_label": {"expected_pass_rate": 0.5, "labeled_at": "yesterday"}},
        ["$.human_label.labeled_at", "expected date YYYY-MM-DD"],
    ),
    (
        {"human_label": {"expected_pass_rate": 0.5, "labelled_by": "ann"}},
        ["$.human_label.labelled_by", "unknown field"],
    ),
    ({"human_label": 0.8}, ["$.human_label", "expected object"]),
    (
        {"timeout_seconds": -5},
        ["$.timeout_seconds", "expected positive number <= 86400 (24 h), got -5"],
    ),
    ({"timeout_seconds": 0}, ["$.timeout_seconds", "positive number"]),
    (
        {"timeout_seconds": "ten"},
        ["$.timeout_seconds", "positive number <= 86400 (24 h) or object", '"ten"'],
    ),
    ({"timeout_seconds": {"agent": 0}}, ["$.timeout_seconds.agent", "positive number"]),
    ({"timeout_seconds": 86401}, ["$.timeout_seconds", "<= 86400", "got 86401"]),
    ({"timeout_seconds": {"checks": 1e300}}, ["$.timeout_seconds.checks", "<= 86400"]),
    ({"timeout_seconds": float("inf")}, ["$.timeout_seconds", "got Infinity"]),
    ({"timeout_seconds": float("nan")}, ["$.timeout_seconds", "expected a finite number, got NaN"]),
    (
        {"human_label": {"expected_pass_rate": float("nan")}},
        ["$.human_label.expected_pass_rate", "finite", "NaN"],
    ),
    ({"timeout_seconds": {"check": 5}}, ["$.timeout_seconds.check", "unknown field"]),
    ({"timeout_seconds": {}}, ["$.timeout_seconds", "at least one of agent, checks"]),
    ({"requires": "ruff"}, ["$.requires", "expected list of strings", '"ruff"']),
    ({"requires": ["ruff check"]}, ["$.requires[0]", "command name"]),
    ({"aspirational": "yes"}, ["$.aspirational", "expected true or false"]),
    ({"dificulty": 3}, ["$.dificulty", "did you mean 'difficulty'"]),
    ({"Tags": ["x"]}, ["$.Tags", "did you mean 'tags'"]),
    ({"timeout": 30}, ["$.timeout", "did you mean 'timeout_seconds'"]),
]
# The real CLI as a subprocess for a representative few; the whole matrix in-process (fast).
METADATA_CLI_CASES = [METADATA_CASES[i] for i in (0, 5, 10, 13, 19, 21, 23, 26, 30, 33)]


@pytest.mark.parametrize(("metadata", "needles"), METADATA_CLI_CASES)
def test_bad_metadata_field(repo_root, make_task, cli, assert_bad_input, metadata, needles):
    make_task(repo_root, metadata=metadata)
    line = assert_bad_input(cli("list", cwd=repo_root), META, *needles)
    assert line.startswith(f"ci-eval: error: {META}: $")


@pytest.mark.parametrize(("metadata", "needles"), METADATA_CASES)
def test_bad_metadata_field_matrix(
    repo_root, make_task, main_cli, assert_bad_input, metadata, needles
):
    make_task(repo_root, metadata=metadata)
    line = assert_bad_input(main_cli("list", cwd=repo_root), META, *needles)
    assert line.startswith(f"ci-eval: error: {META}: $")


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ('{"difficulty": 2,\n  "area": "x"\n  "tags": []}', ["line 3", "invalid JSON"]),
        ("", ["line 1", "invalid JSON"]),
        ("[1, 2]", ["$", "expected object, got [1, 2]"]),
        (
            json.dumps({"area": "x", "tags": [], "created": "2026-01-01"}),
            ["$.difficulty", "missing"],
        ),
        (b"\xff\xfe{}", ["not UTF-8"]),
        # Python's json reads 1e999 as inf and NaN as nan; neither is a timeout.
        (VALID_META + ', "timeout_seconds": 1e999}', ["$.timeout_seconds", "got Infinity"]),
        (
            VALID_META + ', "timeout_seconds": {"agent": NaN}}',
            ["$.timeout_seconds.agent", "expected a finite number, got NaN"],
        ),
        (VALID_META + ', "difficulty": 3}', ["invalid JSON", 'duplicate key "difficulty"']),
    ],
)
def test_bad_metadata_file(repo_root, make_task, cli, assert_bad_input, content, needles):
    make_task(repo_root, metadata=content)
    assert_bad_input(cli("list", cwd=repo_root), META, *needles)


def test_missing_metadata(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, metadata=None)
    assert_bad_input(cli("list", cwd=repo_root), META, "missing")


def test_missing_prompt(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, prompt=None)
    assert_bad_input(cli("list", cwd=repo_root), "tasks/task-001-example/prompt.md", "missing")


def test_blank_prompt(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, prompt="  \n\n")
    assert_bad_input(cli("list", cwd=repo_root), "tasks/task-001-example/prompt.md", "empty")


def test_missing_checks(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, checks=None)
    assert_bad_input(cli("list", cwd=repo_root), "tasks/task-001-example/checks.py", "missing")


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("task-1-short-number", "task-001-short-number"),
        ("task-001-Upper-Case", "task-001-upper-case"),
        ("task-001_underscore", "task-001-underscore"),
        ("task-001-", None),
        ("001-no-prefix", None),
    ],
)
def test_bad_folder_name(repo_root, make_task, main_cli, assert_bad_input, name, hint):
    make_task(repo_root, name=name)
    line = assert_bad_input(main_cli("list", cwd=repo_root), f"tasks/{name}", "task-NNN-kebab-name")
    if hint:
        assert f"e.g. {hint}" in line


def test_duplicate_number_names_both(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, name="task-007-first")
    make_task(repo_root, name="task-007-second")
    assert_bad_input(
        cli("list", cwd=repo_root),
        "duplicate task number 007",
        "tasks/task-007-first",
        "tasks/task-007-second",
    )


def test_bad_folder_name_cli(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, name="task-1-x")
    assert_bad_input(cli("list", cwd=repo_root), "tasks/task-1-x", "task-NNN-kebab-name")


def test_duplicate_number_with_different_padding(repo_root, make_task, main_cli, assert_bad_input):
    make_task(repo_root, name="task-012-a")
    make_task(repo_root, name="task-0012-b")
    assert_bad_input(main_cli("list", cwd=repo_root), "duplicate task number 012")


def test_unknown_task_for_list(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    assert_bad_input(cli("list", "task-999", cwd=repo_root), "tasks", "unknown task 'task-999'")


def test_root_does_not_exist(tmp_path, cli, assert_bad_input):
    missing = tmp_path / "nowhere"
    assert_bad_input(cli("list", "--root", missing, cwd=tmp_path), str(missing), "--root")


def test_no_tasks_folder(tmp_path, cli, assert_bad_input):
    assert_bad_input(cli("validate", cwd=tmp_path), "tasks", "no tasks/ folder")


def test_unknown_schema_name(cli, assert_bad_input):
    assert_bad_input(cli("schema", "nope"), "unknown schema 'nope'", "metadata")


def test_schema_output_into_missing_folder(tmp_path, cli, assert_bad_input):
    out = tmp_path / "missing" / "m.json"
    assert_bad_input(cli("schema", "metadata", "--output", out), "--output", str(out.parent))


# --- validate: completeness and lint --------------------------------------------------------


def test_validate_reports_lint_finding(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, checks="import openai\n")
    assert_bad_input(
        cli("validate", cwd=repo_root), "tasks/task-001-example/checks.py:1:", "[llm-sdk]"
    )


def test_validate_missing_solution(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, solution=None)
    assert_bad_input(cli("validate", cwd=repo_root), "tasks/task-001-example/solution", "missing")


def test_validate_solution_without_patch(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, solution={"notes.txt": "todo"})
    assert_bad_input(cli("validate", cwd=repo_root), "tasks/task-001-example/solution", "*.patch")


def test_validate_bad_negative(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, negatives={"wrong.txt": "x"})
    assert_bad_input(
        cli("validate", cwd=repo_root), "tasks/task-001-example/negatives/wrong.txt", "*.patch"
    )


def test_validate_lists_every_problem(repo_root, make_task, cli):
    make_task(repo_root, metadata={"difficulty": 9, "created": "nope"}, solution=None)
    make_task(repo_root, name="task-002-fine")
    result = cli("validate", cwd=repo_root)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert any("$.difficulty" in line for line in lines)
    assert any("$.created" in line for line in lines)
    assert any("solution" in line for line in lines)
    assert "task-001-example: invalid (3 problems)" in result.stdout
    assert "task-002-fine: ok" in result.stdout


# --- ci-eval.yaml -----------------------------------------------------------------------------


CONFIG_CASES = [
    ("agents: [unclosed\n", ["ci-eval.yaml", "line 2", "invalid YAML"]),
    ("agent:\n  x: {command: run}\n", ["ci-eval.yaml", "agent:", "did you mean 'agents'"]),
    ("- just\n- a list\n", ["ci-eval.yaml", "expected a mapping at the top level"]),
    ("agents:\n  claude: {command: 42}\n", ["agents.claude.command", "expected a command"]),
    ("agents:\n  claude: {command: ''}\n", ["agents.claude.command", "empty string"]),
    ("agents:\n  claude: {command: []}\n", ["agents.claude.command", "empty list"]),
    ("agents:\n  claude: {command: 'run \"x'}\n", ["agents.claude.command", "cannot split"]),
    ("agents:\n  claude: {timeout_seconds: 5}\n", ["agents.claude.command", "missing"]),
    (
        "agents:\n  claude: {command: run, timeout_seconds: ten}\n",
        ["agents.claude.timeout_seconds", "expected a positive number", 'got "ten"'],
    ),
    (
        "agents:\n  claude: {command: run, timeout_seconds: -1}\n",
        ["agents.claude.timeout_seconds", "got -1"],
    ),
    (
        "agents:\n  claude: {command: run, timeout_seconds: 1.0e+300}\n",
        ["agents.claude.timeout_seconds", "expected at most 86400 seconds (24 h), got 1e+300"],
    ),
    ("agents:\n  claude: {command: run, env: SECRET}\n", ["agents.claude.env", "list"]),
    ("agents:\n  claude: {command: run, env: [1A]}\n", ["agents.claude.env[0]", '"1A"']),
    ("agents:\n  claude: {command: run, usage: tokens}\n", ["agents.claude.usage", "file"]),
    ("agents:\n  claude: {command: run, timeout: 5}\n", ["agents.claude.timeout", "unknown"]),
    ("agents:\n  reference: {command: run}\n", ["agents.reference", "built-in"]),
    ("agents:\n  noop: {command: run}\n", ["agents.noop", "built-in"]),
    ("agents:\n  claude: run\n", ["agents.claude", "expected a mapping"]),
    ("default_agent: ghost\n", ["default_agent", "unknown agent 'ghost'"]),
    ("checks:\n  env: FOO\n", ["checks.env", "list"]),
    ("checks:\n  envs: [FOO]\n", ["checks.envs", "did you mean 'env'"]),
    ("agents:\n  a: {command: x}\n  a: {command: y}\n", ["ci-eval.yaml", "line 3", "duplicate"]),
]
CONFIG_CLI_CASES = [CONFIG_CASES[i] for i in (0, 1, 3, 8, 14)]


@pytest.mark.parametrize(("yaml_text", "needles"), CONFIG_CLI_CASES)
def test_bad_config(repo_root, make_task, cli, assert_bad_input, yaml_text, needles):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(yaml_text)
    line = assert_bad_input(cli("validate", cwd=repo_root), *needles)
    assert line.startswith("ci-eval.yaml: ")


@pytest.mark.parametrize(("yaml_text", "needles"), CONFIG_CASES)
def test_bad_config_matrix(repo_root, make_task, main_cli, assert_bad_input, yaml_text, needles):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(yaml_text)
    line = assert_bad_input(main_cli("validate", cwd=repo_root), *needles)
    assert line.startswith("ci-eval.yaml: ")


# --- results files, --output, --out, --timeout ------------------------------------------------

RECORD = {"run": 1, "task": "task-001-example", "status": "pass", "passed": True, "agent": "ref"}
RESULTS = "results/task-001-example.jsonl"


def write_record(root, **changes) -> None:
    (root / "results").mkdir(parents=True, exist_ok=True)
    record = {**RECORD, **changes}
    (root / RESULTS).write_text(json.dumps({k: v for k, v in record.items() if v is not ...}) + "\n")


RESULTS_CASES = [
    ({"wall_seconds": "abc"}, ["wall_seconds", 'expected a finite number >= 0 or null, got "abc"']),
    ({"tokens": "many"}, ["tokens", 'expected a whole number >= 0 or null, got "many"']),
    ({"cost_usd": "1"}, ["cost_usd", 'got "1"']),
    ({"tokens": -1}, ["tokens", "got -1"]),
    ({"tokens": 1.5}, ["tokens", "got 1.5"]),
    ({"tokens": True}, ["tokens", "got true"]),
    ({"input_tokens": "3"}, ["input_tokens", 'got "3"']),
    ({"output_tokens": -2}, ["output_tokens", "got -2"]),
    ({"cost_usd": float("nan")}, ["cost_usd", "got NaN"]),
    ({"cost_usd": -0.01}, ["cost_usd", "got -0.01"]),
    ({"wall_seconds": float("inf")}, ["wall_seconds", "got Infinity"]),
    ({"agent_seconds": [1]}, ["agent_seconds", "got [1]"]),
    ({"checks_seconds": False}, ["checks_seconds", "got false"]),
    ({"attempt": 0}, ["attempt", "expected a whole number >= 1, got 0"]),
    ({"attempt": None}, ["attempt", "got null"]),
    ({"attempt": 1.0}, ["attempt", "got 1.0"]),
    ({"k": 0}, ["k", "expected a whole number >= 1, got 0"]),
    ({"k": "5"}, ["k", 'got "5"']),
    ({"requested": -3}, ["requested", "expected a whole number >= 1, got -3"]),
    ({"passed": False}, ["passed", 'got false with status "pass"']),
    ({"status": "fail"}, ["passed", 'got true with status "fail"']),
    ({"status": "error", "passed": True}, ["passed", '"error"']),
    ({"passed": ...}, ["passed", "missing field"]),
]
RESULTS_CLI_CASES = [RESULTS_CASES[i] for i in (0, 1, 2, 8, 13, 16, 19)]


@pytest.mark.parametrize(("changes", "needles"), RESULTS_CLI_CASES)
def test_bad_results_field(tmp_path, cli, assert_bad_input, changes, needles):
    write_record(tmp_path, **changes)
    line = assert_bad_input(cli("report", cwd=tmp_path), *needles)
    assert line.startswith(f"ci-eval: error: {RESULTS}:1: {needles[0]}: ")


@pytest.mark.parametrize(("changes", "needles"), RESULTS_CASES)
def test_bad_results_field_matrix(tmp_path, main_cli, assert_bad_input, changes, needles):
    write_record(tmp_path, **changes)
    line = assert_bad_input(main_cli("report", cwd=tmp_path), *needles)
    assert line.startswith(f"ci-eval: error: {RESULTS}:1: {needles[0]}: ")


def test_results_optional_numbers_may_be_null_or_valid(tmp_path, main_cli):
    write_record(tmp_path, attempt=2, k=1, requested=1, tokens=0, input_tokens=None, output_tokens=7,
                 cost_usd=0, wall_seconds=1.5, agent_seconds=None, checks_seconds=0.25)
    result = main_cli("report", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with open(tmp_path / RESULTS, "a") as handle:
        handle.write(json.dumps({**RECORD, "run": 2, "status": "timeout", "passed": False, "k": 2})
                     + "\n")
    assert main_cli("report", cwd=tmp_path).returncode == 0


def test_results_file_that_is_a_folder(tmp_path, cli, assert_bad_input):
    (tmp_path / "results" / "x.jsonl").mkdir(parents=True)
    assert_bad_input(cli("report", cwd=tmp_path), "results/x.jsonl", "is a folder")


def test_number_problem_is_the_rule_for_usage_values():
    from ci_eval.results.records import number_problem

    assert number_problem("tokens", 120) is None and number_problem("tokens", None) is None
    assert number_problem("cost_usd", 0.25) is None and number_problem("cost_usd", 3) is None
    assert number_problem("tokens", 1.0) == "expected a whole number >= 0 or null, got 1.0"
    assert number_problem("cost_usd", float("nan")) == (
        "expected a finite number >= 0 or null, got NaN"
    )
    assert number_problem("k", None) == "expected a whole number >= 1, got null"
    with pytest.raises(KeyError):
        number_problem("diff", "x")


@pytest.mark.parametrize("target, expected", [("folder", "is a folder"),
                                              ("existing-folder", "is a folder"),
                                              ("afile/out.txt", "is a file (expected a folder)")])
def test_report_output_must_be_a_file_path(tmp_path, cli, assert_bad_input, target, expected):
    write_record(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "existing-folder").mkdir()
    (tmp_path / "existing-folder" / "keep.txt").write_text("kept\n")
    (tmp_path / "afile").write_text("")
    out = tmp_path / target
    assert_bad_input(cli("report", "--output", out, cwd=tmp_path), "--output", expected)
    assert (tmp_path / "existing-folder" / "keep.txt").read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "existing-folder", "folder",
                                                          "results"]


def test_report_output_creates_its_folder(tmp_path, cli):
    write_record(tmp_path)
    result = cli("report", "--json", "--output", "reports/ci/out.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "reports" / "ci" / "out.json").read_text())["tasks"]


def test_report_output_into_the_absolute_tmp_folder(tmp_path, cli, assert_bad_input):
    write_record(tmp_path)
    assert_bad_input(cli("report", "--output", "/tmp", cwd=tmp_path), "/tmp", "is a folder")


def test_schema_output_onto_a_folder(tmp_path, cli, assert_bad_input):
    assert_bad_input(cli("schema", "metadata", "--output", tmp_path), str(tmp_path), "is a folder")
    assert list(tmp_path.iterdir()) == []


def test_run_out_that_is_a_file(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    (repo_root / "afile").write_text("not a folder\n")
    assert_bad_input(cli("run", "--agent", "reference", "--out", "afile", "-k", "1", cwd=repo_root),
                     "afile: --out: is a file (expected a folder)")
    assert (repo_root / "afile").read_text() == "not a folder\n"


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "86401", "0", "-1", "soon"])
def test_run_timeout_must_be_finite_and_at_most_a_day(repo_root, make_task, cli, assert_bad_input,
                                                      value):
    make_task(repo_root)
    assert_bad_input(cli("run", "--agent", "reference", "--timeout", value, cwd=repo_root),
                     "--timeout", "expected seconds > 0 and <= 86400", value)
    assert not (repo_root / "results").exists()


def test_positive_seconds_bounds():
    import argparse

    from ci_eval.cli_options import positive_seconds
    from ci_eval.tasks.model import MAX_TIMEOUT_SECONDS
    from ci_eval.tasks.schema import load_schema

    assert positive_seconds("86400") == 86400.0 == MAX_TIMEOUT_SECONDS
    assert positive_seconds("0.5") == 0.5
    for text in ("86400.5", "Infinity", "-inf", "NaN", "0"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_seconds(text)
    # metadata.schema.json states the same bound
    assert load_schema("metadata")["$defs"]["seconds"]["maximum"] == MAX_TIMEOUT_SECONDS


# --- the atomic writer and folder helper (ci_eval/output.py) ----------------------------------


def test_write_atomic_replaces_keeps_mode_and_leaves_no_temp(tmp_path):
    from ci_eval.output import write_atomic

    target = tmp_path / "out.txt"
    write_atomic(target, "one\n")
    assert target.read_text() == "one\n"
    target.chmod(0o600)
    write_atomic(target, "two\n")
    assert target.read_text() == "two\n" and target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_write_atomic_failure_keeps_the_old_file(tmp_path, monkeypatch):
    import os

    from ci_eval.errors import UserError
    from ci_eval.output import write_atomic

    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(UserError, match=r"out.txt: --x: cannot write \(No space left on device\)"):
        write_atomic(target, "new\n", field="--x")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_write_atomic_rejects_folders(tmp_path):
    from ci_eval.errors import UserError
    from ci_eval.output import write_atomic

    with pytest.raises(UserError, match="--o: is a folder"):
        write_atomic(tmp_path, "x", field="--o")
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="file: --o: is not a folder"):
        write_atomic(tmp_path / "file" / "x.txt", "x", field="--o")
    with pytest.raises(UserError, match="missing: --o: folder does not exist"):
        write_atomic(tmp_path / "missing" / "x.txt", "x", field="--o")


def test_ensure_dir(tmp_path):
    from ci_eval.errors import UserError
    from ci_eval.output import ensure_dir

    made = ensure_dir(tmp_path / "a" / "b", field="--out")
    assert made.is_dir() and ensure_dir(made, field="--out") == made
    (tmp_path / "afile").write_text("")
    with pytest.raises(UserError, match=r"afile: --out: is a file \(expected a folder\)"):
        ensure_dir(tmp_path / "afile", field="--out")
    with pytest.raises(UserError, match=r"afile: --out: is a file \(expected a folder\)"):
        ensure_dir(tmp_path / "afile" / "sub", field="--out")


def test_resume_drops_a_torn_tail_atomically(tmp_path, capsys):
    from ci_eval.results import store as results

    path = tmp_path / "task-001-example.jsonl"
    path.write_text(json.dumps(RECORD) + "\n" + '{"run": 2, "ta')
    path.chmod(0o640)
    found = results.read_file(path, allow_torn_tail=True)
    assert [r["run"] for r in found.records] == [1]
    results.drop_torn_tail(found)
    assert path.read_text() == json.dumps(RECORD) + "\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


# --- main(): unexpected errors never exit 1 ---------------------------------------------------


def _cli_with_failing_handler(exception: str, env=None):
    """The real CLI (`list`) in a subprocess whose handler raises `exception`."""
    import subprocess
    import sys

    from conftest import _cli_env

    code = (
        "import ci_eval.commands.list_tasks as cmd\n"
        "def boom(args):\n"
        f"    raise {exception}\n"
        "cmd.run = boom\n"
        "from ci_eval.main import main\n"
        "raise SystemExit(main(['list']))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, env=_cli_env(env), timeout=60)


def test_unexpected_os_error_is_an_internal_error_naming_the_path():
    """Bad user paths are turned into UserError where they are read (exit 2); an OSError that
    reaches main() is a bug of ours (exit 3), still one line naming the path."""
    result = _cli_with_failing_handler("PermissionError(13, 'Permission denied', '/x/y.json')")
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "ci-eval: error: /x/y.json: Permission denied (internal error; rerun with "
        "CI_EVAL_DEBUG=1 for the traceback)"]


def test_unexpected_exception_exits_3_in_one_line():
    result = _cli_with_failing_handler("ValueError('bad\\nthing')")
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    hint = "(internal error; rerun with CI_EVAL_DEBUG=1 for the traceback)"
    assert result.stderr.strip().splitlines() == [f"ci-eval: error: ValueError: bad thing {hint}"]


def test_debug_env_shows_the_traceback():
    result = _cli_with_failing_handler("KeyError('x')", env={"CI_EVAL_DEBUG": "1"})
    assert result.returncode == 3
    assert "Traceback" in result.stderr and "in boom" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "ci-eval: error: KeyError: 'x' (internal error)"
