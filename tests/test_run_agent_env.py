"""`run --agent-env NAME`: a variable set on the command line reaches an --agent-cmd agent only
when named; `run` ends by saying how long it took and where the results went."""

from __future__ import annotations

import json

AGENT = "printf '%s\\n' \"$MY_ANSWER\" > answer.txt"


def passes(root) -> list[str]:
    lines = (root / "results" / "task-001-x.jsonl").read_text().splitlines()
    return [json.loads(line)["status"] for line in lines]


def test_a_variable_reaches_the_agent_only_through_agent_env(repo_root, make_task, cli):
    make_task(repo_root, "task-001-x")
    env = {"MY_ANSWER": "42"}
    hidden = cli("run", "--agent-cmd", AGENT, "-k", "1", cwd=repo_root, env=env)
    assert hidden.returncode == 0, hidden.stderr
    assert passes(repo_root) == ["fail"]  # the allow-list kept MY_ANSWER out
    shown = cli("run", "--agent-cmd", AGENT, "--agent-env", "MY_ANSWER", "-k", "1", "--fresh",
                cwd=repo_root, env=env)
    assert shown.returncode == 0, shown.stderr
    assert passes(repo_root) == ["pass"]
    last = shown.stderr.strip().splitlines()[-1]
    assert last.startswith("ci-eval: 1 run(s) of 1 task(s) recorded in ") and " s; " in last
    assert f"results in {repo_root.resolve() / 'results'}" in last


def test_agent_env_bad_input(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root, "task-001-x")
    assert_bad_input(cli("run", "--agent-cmd", AGENT, "--agent-env", "NOT_SET_ANYWHERE", "-k",
                         "1", cwd=repo_root), "NOT_SET_ANYWHERE is not set")
    assert_bad_input(cli("run", "--agent-cmd", AGENT, "--agent-env", "a-b", cwd=repo_root),
                     "--agent-env", "expected a variable name")
    assert not (repo_root / "results" / "task-001-x.jsonl").exists()
    assert "--agent-env" in cli("run", "--help").stdout
