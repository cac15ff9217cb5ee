"""The real agent CLIs (Claude Code, codex, gemini-cli, aider, mini-swe-agent, Qwen Code, opencode,
Cline, Copilot CLI, OpenHands at the versions
pinned in ci_eval/agents/installs.py, which tests/real_clis.py installs) driven through `ci-eval run` against tests/fake_models, one fake
server per case: a solve, a wrong edit and every failure mode. Each test is one CLI; its cases run
side by side (threads), each a `ci-eval run -k 1 --max-attempts 1` of the default task in a repo
of its own, and every case's record is checked: status, the infrastructure kind in the reason,
tokens (input, cached, cache write, output) against what the fake served, cost and cost_source,
agent_outcome. All mismatches of a CLI are reported together.

Skipped (loudly; a failure with CI_EVAL_NO_SKIPS=1) where npm is missing. The install is cached
under ~/.cache/ci-eval-tests (tests/real_clis.py); .ci/run installs it before the suite.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import fake_models
import pytest
import real_clis

from ci_eval.agents.pricing import ModelPrice

KEY = "sk-fake-0123456789abcdef"
HANG_TIMEOUT = 20  # the agent timeout of the hang case: what ends that run
AGENT_TIMEOUT = 240
PARALLEL = 3  # cases of one CLI at a time (xdist runs CLIs side by side too)
PRICE = ModelPrice(input=1.25, cached_input=0.125, cache_write=1.25, output=10)


@dataclass(frozen=True)
class Tool:
    agent: str  # the ci-eval.yaml entry
    preset: str
    program: str
    model: str
    key: str
    api_suffix: str  # base_url = server.url + this
    reports: tuple[str, ...]  # the usage fields it reports: input, cached, cache_write, output
    cost_source: str  # "agent" (its own figure) or "pricing" (ci-eval.yaml's table)
    outcome: dict  # agent_outcome fields of a solve
    modes: tuple[str, ...]
    answered_before_hang: int = 1


COMMON = ("solve", "wrong", "401", "404", "429", "5xx", "cut", "transient", "hang")
# aider retries a failing call for about a minute whatever it is told (its own backoff, up to
# 60 s of waits): its 429, 5xx and cut cases take 2 minutes each, only measuring that wait. They
# passed on 2026-12-01 and their output is pinned in tests/fixtures/real_clis (aider-*-cut.txt);
# CI_EVAL_REAL_CLI_ALL_MODES=1 runs them again.
AIDER_SLOW = ("429", "5xx", "cut")
# Claude's cut_stream case is left out too: whether Claude 2.1.197 fell back to a whole request
# within its CLAUDE_CODE_MAX_RETRIES=2 varied run to run (seen both ways); 2.1.332 recovered in
# 8 of 8 runs on 2026-12-03 (once with an extra request: 3000 input tokens), too few to call it
# settled. Its output after the fallback is pinned in
# tests/fixtures/real_clis/claude-2.1.332-cut-stream.txt (and 2.1.197's).
ALL_MODES = os.environ.get("CI_EVAL_REAL_CLI_ALL_MODES") == "1"
AIDER_MODES = COMMON if ALL_MODES else tuple(m for m in COMMON if m not in AIDER_SLOW)
ALL = ("input", "cached", "cache_write", "output")
TOOLS = {
    "claude-code": Tool("claude", "claude-code", "claude", "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
                        "", ALL, "agent", {"subtype": "success", "is_error": False},
                        COMMON + (("cut_stream",) if ALL_MODES else ())),
    "codex": Tool("codex", "codex", "codex", "gpt-5-codex", "OPENAI_API_KEY", "/v1", ALL,
                  "pricing", {"turns_completed": 1, "turns_failed": 0}, COMMON),
    "gemini": Tool("gemini", "gemini", "gemini", "gemini-2.5-pro", "GEMINI_API_KEY", "",
                   ("input", "cached", "output"), "pricing", {"status": "success"}, COMMON),
    "aider": Tool("aider", "aider", "aider", "anthropic/claude-sonnet-4-20250514",
                  "ANTHROPIC_API_KEY", "", ALL, "agent", {"messages": 1}, AIDER_MODES,
                  answered_before_hang=0),  # aider asks once: its only request hangs
    "mini-swe-agent": Tool("mini", "mini-swe-agent", "mini-swe-agent", "openai/gpt-4o",
                           "OPENAI_API_KEY", "/v1", ("input", "cached", "output"), "agent",
                           {"exit_status": "Submitted", "api_calls": 2}, COMMON),
}
# Qwen Code's 5xx case takes about 80 s: its unconfigurable 7 attempts per call (docs/agents.md).
TOOLS["qwen-code"] = Tool("qwen", "qwen-code", "qwen", "qwen3-coder-plus", "OPENAI_API_KEY", "/v1",
                          ("input", "cached", "output"), "pricing",
                          {"subtype": "success", "is_error": False, "num_turns": 2}, COMMON)
TOOLS["opencode"] = Tool("opencode", "opencode", "opencode", "anthropic/claude-sonnet-4-5",
                         "ANTHROPIC_API_KEY", "/v1", ALL, "agent", {"steps": 2, "finish": "stop"},
                         COMMON)
# Cline prices claude-sonnet-4-5 itself (its model list); the base URL goes into its settings.
TOOLS["cline"] = Tool("cline", "cline", "cline", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY",
                      "/v1", ALL, "agent", {"finish_reason": "completed", "iterations": 2}, COMMON)
# Copilot CLI through its own-provider settings (COPILOT_PROVIDER_*), Anthropic's wire format;
# its token counts come from its session log, its cost from the pricing table.
TOOLS["copilot"] = Tool("copilot", "copilot", "copilot", "claude-sonnet-4-5",
                        "COPILOT_PROVIDER_API_KEY", "", ALL, "pricing", {"turns": 2}, COMMON)
TOOLS |= {
    # OpenHands' cost is litellm's price of openai/gpt-4o; the chat API says no cache writes
    "openhands": Tool("openhands", "openhands", "openhands", "openai/gpt-4o", "LLM_API_KEY",
                      "/v1", ("input", "cached", "output"), "agent",
                      {"execution_status": "finished", "llm_calls": 2}, COMMON),
}
# mode -> (status, infrastructure kind named in the reason)
EXPECTED = {"solve": ("pass", None), "wrong": ("fail", None), "transient": ("pass", None),
            "cut_stream": ("pass", None), "401": ("error", "auth"), "404": ("error", "setup"),
            "429": ("error", "rate_limit"), "5xx": ("error", "overloaded"),
            "cut": ("error", "network"), "hang": ("timeout", None)}


@pytest.fixture(scope="session")
def cli_bins() -> dict[str, str]:
    why = real_clis.missing()
    if why:
        pytest.skip(f"real agent CLIs not installable here: {why}")
    return real_clis.install()


def _case(tool: Tool, mode: str, root: Path, bins: dict, cli) -> dict:
    """One `ci-eval run` of the default task with `tool` against a fake in `mode`."""
    repo = root / "repo"
    (repo / "tasks").mkdir(parents=True)

    timeout = HANG_TIMEOUT if mode == "hang" else AGENT_TIMEOUT
    real_clis.write_answer_task(repo, timeout)
    with fake_models.FakeModelServer(mode, answered_before_hang=tool.answered_before_hang) as fake:
        (repo / "ci-eval.yaml").write_text(
            f"agents:\n  {tool.agent}:\n    preset: {tool.preset}\n    model: {tool.model}\n"
            f"    base_url: {fake.url}{tool.api_suffix}\n"
            f"pricing:\n  {tool.model}: {{input: {PRICE.input}, cached_input: {PRICE.cached_input}, "
            f"cache_write: {PRICE.cache_write}, output: {PRICE.output}}}\n"
            if tool.cost_source == "pricing" else
            f"agents:\n  {tool.agent}:\n    preset: {tool.preset}\n    model: {tool.model}\n"
            f"    base_url: {fake.url}{tool.api_suffix}\n")
        # The agent gets a HOME of its own per run, with the preset's home files (gemini's
        # settings.json) written by the harness: nothing of the host's HOME is needed.
        env = {"PATH": f"{bins[tool.program]}{os.pathsep}{os.environ['PATH']}", tool.key: KEY}
        ran = cli("run", "--agent", tool.agent, "-k", "1", "--max-attempts", "1", "--json",
                  cwd=repo, env=env, timeout=AGENT_TIMEOUT + 120)
        served = fake.served_total()
        requests = [r.answer for r in fake.requests]
    lines = (repo / "results" / "task-001-answer.jsonl").read_text().splitlines() \
        if (repo / "results" / "task-001-answer.jsonl").exists() else []
    return {"record": json.loads(lines[-1]) if lines else None, "served": served,
            "requests": requests, "stderr": ran.stderr[-2000:], "exit": ran.returncode}


def _problems(tool: Tool, mode: str, case: dict) -> list[str]:
    record, served = case["record"], case["served"]
    if record is None:
        return [f"no record (exit {case['exit']}): {case['stderr']}"]
    found = []
    status, kind = EXPECTED[mode]
    if record["status"] != status:
        found.append(f"status {record['status']} (expected {status}): {record['reason'][:300]}")
    if kind and f"agent infrastructure error ({kind})" not in record["reason"]:
        found.append(f"reason lacks ({kind}): {record['reason'][:300]}")
    if mode == "cut_stream":
        # Claude recovered by asking for a whole answer; it then reports only the usage of the
        # streamed answers (1000 of the 2000 input tokens served): no exact check is possible.
        if not record.get("input_tokens"):
            found.append(f"cut_stream recorded no input tokens: {record.get('input_tokens')}")
    elif status == "pass" or mode == "wrong":
        recorded = {"input": record.get("input_tokens"), "cached": record.get("cached_input_tokens"),
                    "cache_write": record.get("cache_write_tokens"),
                    "output": record.get("output_tokens")}
        expected = {name: getattr(served, name) if name in tool.reports else None for name in ALL}
        if recorded != expected:
            found.append(f"tokens {recorded} (the fake served {expected})")
        if record.get("tokens") != (served.input + served.output):
            found.append(f"tokens total {record.get('tokens')}")
        if record.get("cost_source") != tool.cost_source:
            found.append(f"cost_source {record.get('cost_source')} (expected {tool.cost_source})")
        if tool.cost_source == "pricing":
            cost = round(PRICE.cost(served.input, served.output, served.cached,
                                    served.cache_write if "cache_write" in tool.reports else None), 8)
            if record.get("cost_usd") != pytest.approx(cost):
                found.append(f"cost {record.get('cost_usd')} (priced: {cost})")
        elif not (record.get("cost_usd") or 0) > 0:
            found.append(f"cost {record.get('cost_usd')} (the tool's own figure expected)")
        outcome = record.get("agent_outcome") or {}
        if status == "pass" and any(outcome.get(k) != v for k, v in tool.outcome.items()):
            found.append(f"agent_outcome {outcome} (expected {tool.outcome})")
    # Claude killed after one answered message: its input is known, its output not (item 5).
    if mode == "hang" and tool.preset == "claude-code" and \
            (record.get("input_tokens"), record.get("output_tokens")) != (1000, None):
        found.append(f"hang tokens {record.get('input_tokens')}/{record.get('output_tokens')}")
    return [f"{tool.preset} {mode}: {p} (requests: {case['requests']})" for p in found]


@pytest.mark.parametrize("preset", list(TOOLS))
def test_real_cli_through_ci_eval_run(preset, cli_bins, tmp_path, cli):
    tool = TOOLS[preset]
    if tool.program not in cli_bins:  # a pip CLI whose Python this machine lacks (real_clis)
        pytest.skip(f"LOUD SKIP: {tool.program} not installed: no Python "
                    f"{real_clis.PIP_PYTHONS.get(tool.program)} here")
    with ThreadPoolExecutor(PARALLEL) as pool:
        cases = dict(zip(tool.modes, pool.map(
            lambda mode: _case(tool, mode, tmp_path / mode, cli_bins, cli), tool.modes)))
    problems = [p for mode, case in cases.items() for p in _problems(tool, mode, case)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version, too_old", [("v18.19.1", True), ("v20.0.0", False),
                                              ("v22.3.0", False), ("", True)])
def test_an_old_node_is_named_before_any_install(version, too_old, tmp_path, monkeypatch):
    for program, script in (("node", f"#!/bin/sh\necho {version}\n"), ("npm", "#!/bin/sh\n")):
        (tmp_path / program).write_text(script)
        (tmp_path / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    why = real_clis.missing()
    assert bool(why) is too_old, why
    if too_old:
        assert f"node {version or '(no version)'} is too old" in why and ">= 20" in why
