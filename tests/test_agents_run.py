"""Real agents through the real CLI: presets driven with fake CLIs on PATH, infrastructure errors
retried with backoff, preflight, budgets, logs, masked secrets, a broken setup said as such."""

from __future__ import annotations

import json
import os
from pathlib import Path

FAKE_BIN = Path(__file__).resolve().parent / "fake_clis" / "bin"
KEY = "sk-ant-test-0123456789abcdef"


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "GITHUB_ACTIONS")}
    env["PATH"] = f"{FAKE_BIN}{os.pathsep}{env['PATH']}"
    env["CI_EVAL_BACKOFF_BASE"] = "0.01"
    return {**env, **extra}


def _config(root: Path, **agent) -> None:
    spec = {"preset": "claude-code", "env": ["FAKE_AGENT_MODE"], **agent}
    lines = ["agents:", "  claude:"] + [f"    {k}: {json.dumps(v)}" for k, v in spec.items()]
    (root / "ci-eval.yaml").write_text("\n".join(lines) + "\n")


def _records(root: Path, task: str = "task-001-example") -> list[dict]:
    path = root / "results" / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_preset_run_records_the_tools_usage_cost_and_outcome(repo_root, make_task, cli):
    make_task(repo_root)
    _config(repo_root)
    env = _env(ANTHROPIC_API_KEY=KEY, FAKE_AGENT_MODE="success")
    ran = cli("run", "--agent", "claude", "-k", "1", cwd=repo_root, env=env)
    assert ran.returncode == 0, ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass", record["reason"]
    assert record["agent"] == "claude" and record["agent_exit_code"] == 0
    assert record["tokens"] and record["input_tokens"] and record["output_tokens"]
    assert record["cost_usd"] > 0 and record["cost_source"] == "agent"
    assert record["agent_outcome"]["subtype"] == "success"
    log = repo_root / "results" / "logs" / "task-001-example" / "1.log"
    assert '"type":"result"' in log.read_text().replace(" ", "")


def test_rate_limits_are_errors_retried_with_growing_delays_never_scored(repo_root, make_task,
                                                                         cli):
    make_task(repo_root)
    _config(repo_root)
    env = _env(ANTHROPIC_API_KEY=KEY, FAKE_AGENT_MODE="rate_limit")
    ran = cli("run", "--agent", "claude", "-k", "1", "--max-attempts", "3", cwd=repo_root,
              env=env)
    assert ran.returncode == 1, ran.stdout  # inconclusive: no valid run
    (record,) = _records(repo_root)
    assert record["status"] == "error" and record["attempt"] == 3
    assert "rate_limit" in record["reason"] and len(record["retried_errors"]) == 2
    first, second = record["retry_delays_seconds"]
    assert 0.005 <= first <= 0.015 and 0.01 <= second <= 0.03  # base 0.01, doubled, jittered
    assert "inconclusive" in ran.stdout


def test_an_auth_error_is_not_retried(repo_root, make_task, cli):
    make_task(repo_root)
    _config(repo_root)
    env = _env(ANTHROPIC_API_KEY=KEY, FAKE_AGENT_MODE="auth")
    cli("run", "--agent", "claude", "-k", "1", cwd=repo_root, env=env)
    (record,) = _records(repo_root)
    assert record["status"] == "error" and record["attempt"] == 1 and "auth" in record["reason"]


def test_a_missing_api_key_stops_before_any_run_naming_it(repo_root, make_task, cli,
                                                        assert_bad_input):
    make_task(repo_root)
    ran = cli("run", "--agent", "claude-code", "-k", "2", cwd=repo_root,
              env=_env(HOME=str(repo_root.parent)))  # a HOME without `claude login`
    assert_bad_input(ran, "ANTHROPIC_API_KEY", "no run started")
    assert not (repo_root / "results").exists() or not list((repo_root / "results").iterdir())


def test_a_claude_login_file_stands_in_for_the_key(repo_root, make_task, cli, tmp_path,
                                                   assert_bad_input):
    """`claude login` writes ~/.claude/.credentials.json and sets no variable: preflight takes
    the file (the agent sees HOME and reads it); without it, the refusal names the file too."""
    make_task(repo_root)
    home = tmp_path / "home"
    home.mkdir()
    refused = cli("run", "--agent", "claude-code", "-k", "1", cwd=repo_root, env=_env(HOME=str(home)))
    assert_bad_input(refused, f"or log in with claude (no {home}/.claude/.credentials.json)",
                     "no run started")
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {}}\n')
    ran = cli("run", "--agent", "claude-code", "-k", "1", cwd=repo_root, env=_env(HOME=str(home)))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass" and record["agent_outcome"]["subtype"] == "success"


def test_a_missing_env_name_of_a_configured_agent_stops_before_any_run(repo_root, make_task,
                                                                       cli, assert_bad_input):
    make_task(repo_root)
    _config(repo_root, env=["FAKE_AGENT_MODE", "MY_SECRET_TOKEN"])
    ran = cli("run", "--agent", "claude", cwd=repo_root,
              env=_env(ANTHROPIC_API_KEY=KEY, FAKE_AGENT_MODE="success"))
    assert_bad_input(ran, "MY_SECRET_TOKEN is not set", "no run started")


def test_a_budget_of_three_runs_runs_exactly_three(repo_root, make_task, cli):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b")
    ran = cli("run", "--agent", "reference", "-k", "5", "-j", "1", "--max-runs", "3",
              cwd=repo_root, env=_env())
    assert ran.returncode == 1, ran.stdout + ran.stderr
    recorded = _records(repo_root, "task-001-a") + (
        _records(repo_root, "task-002-b")
        if (repo_root / "results" / "task-002-b.jsonl").exists() else [])
    assert len(recorded) == 3
    assert "budget reached: 3 agent run(s) started (max_runs 3)" in ran.stdout
    assert "inconclusive: task-001-a, task-002-b" in ran.stdout


def test_the_agents_secrets_are_masked_in_its_log_and_record(repo_root, make_task, cli):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(
        "agents:\n  leaky:\n    command: 'echo \"key is $MY_API_KEY\"; exit 3'\n"
        "    env: [MY_API_KEY]\n")
    ran = cli("run", "--agent", "leaky", "-k", "1", cwd=repo_root, env=_env(MY_API_KEY=KEY))
    assert ran.returncode == 0, ran.stderr
    results = repo_root / "results"
    everything = "".join(p.read_text() for p in results.rglob("*") if p.is_file())
    assert KEY not in everything
    assert "key is ***" in (results / "logs" / "task-001-example" / "1.log").read_text()
    (record,) = _records(repo_root)
    assert record["agent_exit_code"] == 3 and "agent exited 3" in record["reason"]


def test_an_agent_failing_every_run_the_same_way_is_a_broken_setup_not_a_regression(
        repo_root, make_task, cli):
    make_task(repo_root, "task-001-a")
    make_task(repo_root, "task-002-b")
    crash = "echo 'Error: credentials not found' >&2; exit 1"
    assert cli("run", "-k", "2", "--agent-cmd", crash, cwd=repo_root).returncode == 0
    agent = f"cmd:{crash}"
    baseline = {"schema_version": 2, "agent": agent, "tasks": {}}
    (repo_root / "baseline.json").write_text(json.dumps(baseline))
    compare = cli("compare", "--format", "markdown", cwd=repo_root)
    assert compare.returncode == 1
    first = compare.stdout.splitlines()[1]
    assert first.startswith("### ❌ ci-eval: agent setup broken: `agent exited 1 "
                            "(Error: credentials not found)`"), compare.stdout
    assert "regressed" not in first
    table = cli("compare", cwd=repo_root)
    assert "agent exited non-zero in 2 of 2 runs" in table.stdout


def test_show_prints_a_runs_reason_usage_log_and_diff(repo_root, make_task, cli):
    make_task(repo_root)
    agent = "echo trying; printf '41\\n' > answer.txt"
    assert cli("run", "-k", "2", "--agent-cmd", agent, cwd=repo_root).returncode == 0
    shown = cli("show", "task-001", cwd=repo_root)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.startswith("task-001-example run 2 (attempt 1): fail")
    assert "reason: FAIL: answer.txt:1: expected '42', found '41'" in out
    assert "--- agent log" in out and "\ntrying\n" in out
    assert "+++ b/answer.txt" in out and "+41" in out
    as_json = json.loads(cli("show", "task-001", "1", "--json", cwd=repo_root).stdout)
    assert as_json["record"]["run"] == 1 and as_json["log_tail"] == ["trying"]
    missing = cli("show", "task-001", "9", cwd=repo_root)
    assert missing.returncode == 2 and "no run 9 recorded" in missing.stderr


def test_repo_scripts_an_argv_command_names_are_copied_beside_the_run(repo_root, make_task,
                                                                      cli):
    """The repo root is hidden from the agent: `[python3, agents/solve.py]` (docs/agents.md's
    own example) runs a copy of the script; a script under tasks/ (where the answers are) is
    never copied, and a bash script's words are not taken for paths."""
    make_task(repo_root)
    (repo_root / "agents").mkdir()
    (repo_root / "agents" / "solve.py").write_text("open('answer.txt', 'w').write('42\\n')\n")
    (repo_root / "ci-eval.yaml").write_text(
        "agents:\n"
        "  argv: {command: [python3, agents/solve.py, --fast]}\n"
        "  plain: {command: python3 agents/solve.py}\n"
        "  answers: {command: [python3, tasks/task-001-example/checks.py]}\n"
        "  script: {command: 'python3 agents/solve.py && true'}\n")
    statuses = {}
    for name in ("argv", "plain", "answers", "script"):
        ran = cli("run", "--agent", name, "-k", "1", "--out", f"out-{name}", cwd=repo_root,
                  env=_env())
        (line,) = (repo_root / f"out-{name}" / "task-001-example.jsonl").read_text().splitlines()
        record = json.loads(line)
        statuses[name] = (record["status"], ran.returncode)
        if name in ("answers", "script"):
            assert "can't open file" in record["reason"], record["reason"]
    assert statuses == {"argv": ("pass", 0), "plain": ("pass", 0), "answers": ("fail", 0),
                        "script": ("fail", 0)}  # a fail is a conclusive run: exit 0
