"""A new user's first hour (issue 11), each item through the real CLI: no silent fallbacks, where
am I, readable failures, progress, consistent commands, the first PR, notices, bounds."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

FAILING_AGENT = "printf '41\\n' > answer.txt"


def _run(cli, root, *args, env=None):
    return cli("run", "--agent", "reference", "-k", "1", *args, cwd=root, env=env)


# --- 1. no silent fallback -----------------------------------------------------------------

def test_run_without_an_agent_says_how_to_name_one(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    line = assert_bad_input(cli("run", "-k", "1", cwd=repo_root), "--agent", "no agent to run")
    assert "--agent-cmd" in line and "default_agent" in line and "claude-code" in line
    (repo_root / "ci-eval.yaml").write_text("")  # an empty config names no agent either
    assert_bad_input(cli("run", "-k", "1", cwd=repo_root), "no agent to run")


@pytest.mark.parametrize("name", ["ci-eval.yml", ".ci-eval.yaml"])
def test_a_config_under_another_usual_name_is_read(repo_root, make_task, cli, name):
    make_task(repo_root)
    (repo_root / name).write_text("default_agent: noop\n")
    ran = cli("run", "-k", "1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    assert '"agent": "noop"' in (repo_root / "results" / "task-001-example.jsonl").read_text()


def test_two_config_files_are_flagged(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text("default_agent: noop\n")
    (repo_root / "ci-eval.yml").write_text("default_agent: reference\n")
    assert_bad_input(cli("run", "-k", "1", cwd=repo_root), "ci-eval.yaml and ci-eval.yml")
    validated = cli("validate", cwd=repo_root)
    assert validated.returncode == 2 and "both exist" in validated.stderr


def test_validate_checks_the_config_agents(repo_root, make_task, cli):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text("default_agent: ghost\n")
    validated = cli("validate", cwd=repo_root)
    assert validated.returncode == 2 and "unknown agent 'ghost'" in validated.stderr


# --- 2. where am I -------------------------------------------------------------------------

def test_commands_find_the_repo_root_upward_and_say_which(repo_root, make_task, cli):
    make_task(repo_root)
    deep = repo_root / "tasks" / "task-001-example" / "repo-state"
    listed = cli("list", "--json", cwd=deep)
    assert listed.returncode == 0, listed.stderr
    assert [t["id"] for t in json.loads(listed.stdout)] == ["task-001-example"]
    assert listed.stderr.strip() == f"ci-eval: repo root {repo_root.resolve()}"


def test_root_works_before_the_subcommand(repo_root, make_task, cli, tmp_path):
    make_task(repo_root)
    listed = cli("--root", repo_root, "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)[0]["id"] == "task-001-example"


def test_outside_any_repo_the_error_names_the_folder(cli, tmp_path, assert_bad_input):
    line = assert_bad_input(cli("list", cwd=tmp_path), "no tasks/ folder")
    assert str(tmp_path.resolve()) in line and "--root" in line


# --- 3. readable failures ------------------------------------------------------------------

def test_report_reasons_lists_distinct_reasons_with_counts(repo_root, make_task, cli):
    make_task(repo_root)
    assert cli("run", "-k", "3", "--agent-cmd", FAILING_AGENT, cwd=repo_root).returncode == 0
    out = cli("report", "--reasons", cwd=repo_root).stdout
    assert "task-001-example: why 3 run(s) did not pass" in out
    assert "3 x FAIL: answer.txt:1: expected '42', found '41'" in out
    data = json.loads(cli("report", "--json", cwd=repo_root).stdout)["tasks"][0]
    assert data["failure_reasons"] == [{"reason": "FAIL: answer.txt:1: expected '42', found "
                                        "'41'", "runs": 3}]


def test_compare_says_why_a_changed_task_failed(repo_root, make_task, cli):
    make_task(repo_root)
    assert _run(cli, repo_root).returncode == 0
    assert cli("baseline", "update", "--all", cwd=repo_root).returncode == 0
    assert cli("run", "-k", "2", "--fresh", "--agent-cmd", FAILING_AGENT,
               cwd=repo_root).returncode == 0
    compare = cli("compare", "--format", "markdown", "--allow-agent-mismatch", cwd=repo_root)
    assert "| Why |" in compare.stdout
    assert "2× FAIL: answer.txt:1: expected '42', found '41'" in compare.stdout


def test_kept_workspaces_survive_the_next_run(repo_root, make_task, cli):
    make_task(repo_root)
    kept = _run(cli, repo_root, "--keep")
    assert kept.returncode == 0
    line = next(x for x in kept.stderr.splitlines() if "workspaces kept under" in x)
    folder = Path(line.split("workspaces kept under ", 1)[1].strip())
    assert folder.is_dir()
    assert _run(cli, repo_root, "--fresh").returncode == 0
    assert folder.is_dir()  # not taken for a crashed invocation's leftovers
    import shutil

    shutil.rmtree(folder)


# --- 4. progress ---------------------------------------------------------------------------

def test_github_actions_shows_every_run_as_it_finishes(repo_root, make_task, cli):
    make_task(repo_root)
    ran = cli("run", "--agent", "reference", "-k", "2", "-j", "1", cwd=repo_root,
              env={**os.environ, "GITHUB_ACTIONS": "true"})
    # counted as they finish: a run's checks go on beside the next run's agent, so run 2 may
    # finish first even at -j 1
    groups = re.findall(r"^::group::\[(\d)/2\] task-001-example run (\d): pass", ran.stderr, re.M)
    assert [counter for counter, _ in groups] == ["1", "2"], ran.stderr
    assert sorted(run for _, run in groups) == ["1", "2"], ran.stderr
    assert "task-001-example: 2/2 runs passed" in ran.stderr


# --- 5. consistent commands ----------------------------------------------------------------

def test_every_read_command_takes_json(repo_root, make_task, cli):
    make_task(repo_root)
    assert _run(cli, repo_root).returncode == 0
    assert cli("baseline", "update", "--all", cwd=repo_root).returncode == 0
    for command in (["list"], ["report"], ["compare"], ["verify"], ["calibrate"], ["gc"],
                    ["baseline", "show"], ["validate"], ["history", "show"]):
        out = cli(*command, "--json", cwd=repo_root)
        assert out.returncode in (0, 1), (command, out.stderr)
        json.loads(out.stdout)


def test_report_junit_fails_a_task_only_when_report_exits_1(repo_root, make_task, cli):
    make_task(repo_root)
    agent = 'if [ $((CI_EVAL_RUN % 2)) = 0 ]; then printf "42\\n" > answer.txt; fi'
    assert cli("run", "-k", "6", "--agent-cmd", agent, cwd=repo_root).returncode == 0
    junit = cli("report", "--format", "junit", cwd=repo_root)
    assert junit.returncode == 0  # 3/6 is a result, not a failure of the report
    root = ET.fromstring(junit.stdout)
    assert root.tag == "testsuites" and root.find("testsuite").get("failures") == "0"
    assert "3/6 valid runs passed" in root.find(".//system-out").text


def test_money_is_rounded_for_people_and_exact_in_json(repo_root, make_task, cli):
    make_task(repo_root)
    agent = 'echo \'{"cost_usd": 0.02}\' > "$CI_EVAL_USAGE_FILE"'
    assert cli("run", "-k", "3", "--agent-cmd", agent, cwd=repo_root).returncode == 0
    table = cli("report", cwd=repo_root).stdout
    assert "$0.06" in table and "0.060000000000000005" not in table
    data = json.loads(cli("report", "--json", cwd=repo_root).stdout)["tasks"][0]
    assert data["total_cost_usd"] == pytest.approx(0.06)


def test_pass_at_k_is_labelled_with_its_k(repo_root, make_task, cli):
    make_task(repo_root)
    assert cli("run", "--agent", "reference", "-k", "5", cwd=repo_root).returncode == 0
    header = cli("report", cwd=repo_root).stdout.splitlines()[0].split()
    assert "pass@5" in header and "pass^5" in header
    data = json.loads(cli("report", "--json", cwd=repo_root).stdout)["tasks"][0]
    assert data["pass_at_k_label"] == "pass@5 (unbiased)" and data["k"] == 5


# --- 6. the first PR -----------------------------------------------------------------------

def test_compare_without_a_baseline_reports_every_task_new(repo_root, make_task, cli):
    make_task(repo_root)
    assert _run(cli, repo_root).returncode == 0
    compare = cli("compare", "--json", cwd=repo_root)
    assert compare.returncode == 0, compare.stderr
    data = json.loads(compare.stdout)
    assert [t["status"] for t in data["tasks"]] == ["new"]
    assert any("ci-eval baseline update --all" in note for note in data["notes"])


def test_compare_a_subset_of_tasks(repo_root, make_task, cli):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b")
    assert cli("run", "--agent", "reference", "-k", "1", "task-001", cwd=repo_root).returncode == 0
    everything = cli("compare", "--json", cwd=repo_root)
    assert everything.returncode == 0  # no baseline: task-002 has no results and is new
    (repo_root / "baseline.json").write_text(json.dumps({"schema_version": 2, "agent": "reference",
                                                         "tasks": {}}))
    assert cli("baseline", "update", "--all", cwd=repo_root).returncode == 0
    subset = cli("compare", "--json", "task-001", cwd=repo_root)
    assert subset.returncode == 0, subset.stdout
    assert [t["task"] for t in json.loads(subset.stdout)["tasks"]] == ["task-001-a"]


# --- 7. the isolation notice everywhere ----------------------------------------------------

def test_compare_says_when_solutions_were_readable(repo_root, make_task, cli):
    make_task(repo_root)
    env = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"}
    assert _run(cli, repo_root, env=env).returncode == 0
    for fmt in ("table", "markdown", "json"):
        out = cli("compare", "--format", fmt, cwd=repo_root).stdout
        assert "solutions were readable by the agent" in out, fmt


# --- 8. bounds and hints -------------------------------------------------------------------

def test_a_5001_digit_number_in_metadata_is_one_line(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, metadata='{"difficulty": ' + "9" * 5001 + "}")
    assert_bad_input(cli("list", cwd=repo_root), "metadata.json", "invalid JSON")


@pytest.mark.parametrize("text", ["default_agent: " + "9" * 5001 + "\n",
                                  "x: " + "[" * 5000 + "]" * 5000 + "\n"])
def test_hostile_yaml_is_one_line_exit_2(repo_root, make_task, cli, assert_bad_input, text):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(text)
    assert_bad_input(cli("run", "-k", "1", cwd=repo_root), "ci-eval.yaml", "invalid YAML")


@pytest.mark.parametrize("kind", ["file", "dangling symlink"])
def test_something_named_like_a_task_that_is_no_folder_is_reported(repo_root, make_task, cli,
                                                                   kind):
    make_task(repo_root)
    odd = repo_root / "tasks" / "task-002-lost"
    if kind == "file":
        odd.write_text("")
    else:
        odd.symlink_to(repo_root / "nowhere")
    validated = cli("validate", cwd=repo_root)
    assert validated.returncode == 2
    assert "task-002-lost: is a " in validated.stderr and "expected a task folder" in validated.stderr


def test_k_has_a_documented_maximum(cli, repo_root):
    assert "1-1000" in cli("run", "--help", cwd=repo_root).stdout
    assert cli("run", "-k", "1001", cwd=repo_root).returncode == 2
