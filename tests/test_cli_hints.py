"""First-hour usage errors say what to type instead; a platform without the Linux sandbox is
refused before anything runs; the action's input check refuses what must never reach ci-eval."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from conftest import REPO_ROOT

from ci_eval import main as cli_main


def test_options_before_the_subcommand_get_the_command_to_type(cli, assert_bad_input):
    assert_bad_input(cli("--agent", "claude-code", "run", "-k", "3"),
                     "invalid choice: 'claude-code'",
                     "options of a subcommand go after it: ci-eval run --agent claude-code ...")


def test_a_mistyped_subcommand_gets_did_you_mean(cli, assert_bad_input):
    done = cli("rn")
    assert_bad_input(done, "invalid choice: 'rn'", "did you mean 'run'?", "ci-eval --help")
    assert "choose from" not in done.stderr  # not the list of 23 names


def test_help_lists_the_first_hour_first_and_names_the_action_steps(cli):
    text = cli("--help").stdout
    listed = [line.split()[0] for line in text.splitlines()
              if line.startswith("    ") and line.split() and not line.startswith("     ")]
    assert listed[:5] == ["init", "new-task", "import", "validate", "verify"], listed
    assert listed.index("run") < listed.index("plan") < listed.index("gate")
    assert "Steps of the GitHub Action" in text and "propose-archive" in text.split("Steps")[1]


@pytest.mark.parametrize(("platform", "command", "refused"), [
    ("linux", "run", False), ("darwin", "run", True), ("darwin", "verify", True),
    ("darwin", "validate", False), ("win32", "validate", True), ("win32", None, True)])
def test_platform_problem(platform, command, refused):
    problem = cli_main.platform_problem(command, platform)
    assert (problem is not None) == refused
    if refused:
        assert "needs Linux" in problem and platform in problem and "ci-eval  " not in problem


def test_run_on_macos_is_refused_before_anything(monkeypatch, capsys, repo_root, make_task):
    make_task(repo_root, "task-001-x")
    monkeypatch.setattr(sys, "platform", "darwin")
    code = cli_main.main(["--root", str(repo_root), "run", "--agent", "reference", "-k", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "ci-eval run needs Linux" in err and "nothing was run" in err
    assert not (repo_root / "results").exists()


def check_inputs_script() -> str:
    steps = yaml.safe_load((REPO_ROOT / "action.yml").read_text())["runs"]["steps"]
    [step] = [s for s in steps if s.get("name") == "Check the inputs"]
    return step["run"]


GOOD = {"MODE": "run", "TASKS": "task-001-a 2", "RUNS": "5", "SHARD": "1", "SHARDS": "2",
        "AGENT": "claude-code", "COMMENT": "always", "COMMENT_KEY": "",
        "RUNNER_OS_NAME": "Linux"}


@pytest.mark.parametrize(("change", "needle"), [
    ({}, None),
    ({"TASKS": ""}, None),
    ({"RUNNER_OS_NAME": "Windows"}, "ci-eval needs a Linux runner"),
    ({"RUNNER_OS_NAME": "macOS"}, "this runner is macOS"),
    ({"TASKS": "--remote https://attacker.example/x"}, "tasks: expected task ids"),
    ({"TASKS": "task-001\n--resume"}, "got '--resume'"),
    ({"TASKS": "task-001;rm"}, "got 'task-001;rm'"),
    ({"RUNS": "5 --fresh"}, "runs: expected a positive whole number"),
    ({"SHARDS": "0"}, "shards: expected a positive whole number"),
    ({"AGENT": "--agent-cmd=x"}, "agent: expected an agent name"),
    ({"MODE": "deploy"}, "unknown mode 'deploy'"),
    ({"COMMENT": "sometimes"}, "comment: expected always, on-change"),
    ({"COMMENT_KEY": "docs eval"}, "comment-key: expected"),
    ({"COMMENT": "on-failure", "COMMENT_KEY": "docs"}, None),
])
def test_the_action_checks_its_inputs(change, needle):
    env = {"PATH": "/usr/bin:/bin", **GOOD, **change}
    done = subprocess.run(["bash", "-e", "-c", check_inputs_script()], env=env,
                          capture_output=True, text=True, timeout=30, check=False)
    if needle is None:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        assert done.returncode == 2, done.stdout
        assert done.stdout.startswith("::error title=ci-eval::") and needle in done.stdout
