"""Every preset driven for real: its argv run as a subprocess with a fake CLI first on PATH
(tests/fake_clis), in a temp workspace, with the environment built the way the runner builds it;
stdout+stderr, the exit code and the preset's output files go to parse().

For each preset and each case (success, the tool's max-turns, rate limit, auth error, malformed
output) the table below says the tokens and cost as parsed, the infrastructure kind, the exit
code and whether the workspace was edited. Separate tests check argv and env as built and as the
tool received them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_eval.agents.config import preset_agent, visible_env
from ci_eval.agents.copilot import session_id
from ci_eval.agents.presets import PRESETS
from ci_eval.agents.pricing import ModelPrice, cost_from_pricing

FAKE_BIN = Path(__file__).resolve().parent / "fake_clis" / "bin"
PROMPT = "- Write the answer to the question in README.md into answer.txt.\n"  # starts with "-"
KEYS = {"claude-code": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY",
        "aider": "ANTHROPIC_API_KEY", "goose": "ANTHROPIC_API_KEY",
        "mini-swe-agent": "ANTHROPIC_API_KEY", "qwen-code": "OPENAI_API_KEY",
        "opencode": "ANTHROPIC_API_KEY", "cline": "ANTHROPIC_API_KEY",
        "copilot": "COPILOT_GITHUB_TOKEN"}
KEYS |= {"openhands": "LLM_API_KEY"}


@dataclass
class Ran:
    argv: list[str]
    env: dict
    exit_code: int | None
    output: str
    report: object
    received: dict  # what the fake tool saw: argv, cwd, env
    workspace: Path
    run_dir: Path


def run_preset(tmp_path: Path, name: str, mode: str = "success", *, model: str | None = None,
               extra_args: tuple[str, ...] = (), environ: dict | None = None) -> Ran:
    preset = PRESETS[name]
    # the agent's own HOME is in its run folder, as the runner makes it (run/sandbox/home.py)
    workspace, run_dir, home = tmp_path / "ws", tmp_path / "run", tmp_path / "run" / "home"
    for folder in (workspace, run_dir, home):
        folder.mkdir(parents=True)
    (workspace / "README.md").write_text("What is six times seven?\n")
    for relative, text in preset.home_files(model).items():  # as run/sandbox/home.py does
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text)
    prompt_file = run_dir / "prompt.md"
    prompt_file.write_text(PROMPT)
    if environ is None:
        environ = {"PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}", "HOME": str(home),
                   KEYS[name]: "sk-test-key", "UNRELATED_SECRET": "must-not-leak",
                   "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
                   "LLM_MODEL": "anthropic/claude-sonnet-4-5"}  # openhands has no default
    # The runner's recipe (ci_eval/agents/preset.py): allow-listed names, then fixed values.
    agent = preset_agent(name)
    env = {key: environ[key] for key in visible_env(agent) if key in environ}
    env |= preset.env(model) | preset.run_env(str(run_dir))
    record = tmp_path / "received.json"
    env |= {"FAKE_AGENT_MODE": mode, "FAKE_AGENT_PYTHON": sys.executable,
            "FAKE_AGENT_RECORD": str(record)}
    argv = preset.argv(PROMPT, str(prompt_file), str(workspace), str(run_dir), model, extra_args)
    proc = subprocess.run(argv, cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
                          check=False)
    files = {key: Path(path).read_text() for key, path in preset.output_files(str(run_dir)).items()
             if Path(path).is_file()}
    report = preset.parse(proc.stdout, proc.returncode, files)
    received = json.loads(record.read_text()) if record.exists() else {}
    return Ran(argv, env, proc.returncode, proc.stdout, report, received, workspace, run_dir)


# (preset, mode) -> tokens, input, output, cached, cache write, cost, infra kind, exit, edited
CASES = {
    ("claude-code", "success"): (9216, 9116, 100, 7500, 1600, 0.0123, None, 0, True),
    ("claude-code", "max_turns"): (4592, 4512, 80, 3000, 1500, 0.0081, None, 1, True),
    ("claude-code", "rate_limit"): (0, 0, 0, 0, 0, 0.0, "rate_limit", 0, False),
    ("claude-code", "auth"): (0, 0, 0, 0, 0, 0.0, "auth", 1, False),
    ("claude-code", "overloaded"): (0, 0, 0, 0, 0, 0.0, "overloaded", 1, False),
    ("claude-code", "malformed"): (None, None, None, None, None, None, None, 139, False),
    ("codex", "success"): (24885, 24763, 122, 24448, None, None, None, 0, True),
    ("codex", "max_turns"): (None, None, None, None, None, None, None, 1, True),
    ("codex", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 1, False),
    ("codex", "auth"): (None, None, None, None, None, None, "auth", 1, False),
    ("codex", "malformed"): (None, None, None, None, None, None, None, 0, False),
    ("gemini", "success"): (34246, 33932, 314, 21263, None, None, None, 0, True),
    ("gemini", "max_turns"): (34246, 33932, 314, 21263, None, None, None, 53, True),
    ("gemini", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 1, False),
    ("gemini", "auth"): (None, None, None, None, None, None, "auth", 41, False),
    ("gemini", "malformed"): (None, None, None, None, None, None, None, 0, False),
    ("aider", "success"): (3625, 3500, 125, 2300, 2300, 0.02, None, 0, True),  # sent - writes
    ("aider", "max_turns"): (3625, 3500, 125, 2300, 2300, 0.02, None, 0, True),
    ("aider", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 0, False),
    ("aider", "auth"): (None, None, None, None, None, None, "auth", 0, False),
    ("aider", "malformed"): (None, None, None, None, None, None, None, 0, False),
    ("goose", "success"): (15840, 15320, 520, 9000, 2000, 0.0214, None, 0, True),
    ("goose", "max_turns"): (9000, None, None, None, None, None, None, 0, True),
    ("goose", "rate_limit"): (1200, 1100, 100, None, None, None, "rate_limit", 1, False),
    ("goose", "auth"): (None, None, None, None, None, None, "auth", 1, False),
    ("goose", "malformed"): (None, None, None, None, None, None, None, 101, False),
    ("mini-swe-agent", "success"): (5180, 5000, 180, 3000, 1400, 0.0312, None, 0, True),
    ("mini-swe-agent", "max_turns"): (3340, 3200, 140, 1400, 1400, 0.0201, None, 0, True),
    ("mini-swe-agent", "rate_limit"): (None, None, None, None, None, 0.0, "rate_limit", 1, False),
    ("mini-swe-agent", "auth"): (None, None, None, None, None, 0.0, "auth", 1, False),
    ("mini-swe-agent", "malformed"): (None, None, None, None, None, None, None, 0, False),
    # qwen: input counts the cached tokens; no cost, no cache writes
    ("qwen-code", "success"): (24800, 24500, 300, 20000, None, None, None, 0, True),
    ("qwen-code", "max_turns"): (12210, 12000, 210, 9000, None, None, None, 53, True),
    ("qwen-code", "rate_limit"): (0, 0, 0, 0, None, None, "rate_limit", 1, False),
    ("qwen-code", "auth"): (0, 0, 0, 0, None, None, "auth", 1, False),
    ("qwen-code", "malformed"): (None, None, None, None, None, None, None, 0, False),
    # opencode: input = fresh + cache reads + cache writes; its own cost summed over steps
    ("opencode", "success"): (2980, 2900, 80, 1200, 100, 0.006735, None, 0, True),
    ("opencode", "max_turns"): (2170, 2100, 70, 500, 100, 0.005985, None, 0, True),
    ("opencode", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 1, False),
    ("opencode", "auth"): (None, None, None, None, None, None, "auth", 1, False),
    ("opencode", "malformed"): (None, None, None, None, None, None, None, 0, False),
    ("cline", "success"): (6340, 6200, 140, 4000, 1200, 0.01854, None, 0, True),
    ("cline", "max_turns"): (6340, 6200, 140, 4000, 1200, 0.01854, None, 1, True),
    ("cline", "rate_limit"): (0, 0, 0, 0, 0, 0.0, "rate_limit", 1, False),
    ("cline", "auth"): (0, 0, 0, 0, 0, 0.0, "auth", 1, False),
    ("cline", "malformed"): (None, None, None, None, None, None, None, 0, False),
    ("copilot", "success"): (10890, 10700, 190, 8000, 0, None, None, 0, True),
    ("copilot", "max_turns"): (10890, 10700, 190, 8000, 0, None, None, 1, True),
    ("copilot", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 1, False),
    ("copilot", "auth"): (None, None, None, None, None, None, "auth", 1, False),
    ("copilot", "malformed"): (None, None, None, None, None, None, None, 0, False),
    # OpenHands exits 0 whether the conversation finished or ended on an error (its state file)
    ("openhands", "success"): (13410, 13200, 210, 5800, None, 0.0291, None, 0, True),
    ("openhands", "max_turns"): (13410, 13200, 210, 5800, None, 0.0291, None, 0, True),
    ("openhands", "rate_limit"): (None, None, None, None, None, None, "rate_limit", 0, False),
    ("openhands", "auth"): (None, None, None, None, None, None, "auth", 0, False),
    ("openhands", "malformed"): (None, None, None, None, None, None, None, 0, False),
}


@pytest.mark.parametrize(("name", "mode"), list(CASES), ids=[f"{n}-{m}" for n, m in CASES])
def test_case(tmp_path, name, mode):
    tokens, inp, out, cached, written, cost, infra, exit_code, edited = CASES[(name, mode)]
    ran = run_preset(tmp_path, name, mode)
    report = ran.report
    assert ran.exit_code == exit_code, ran.output
    assert (report.tokens, report.input_tokens, report.output_tokens) == (tokens, inp, out), report
    assert (report.cached_input_tokens, report.cache_write_tokens) == (cached, written), report
    assert report.cost_usd == cost
    assert report.cost_source == ("agent" if cost is not None else None)
    assert (report.infra_error.kind if report.infra_error else None) == infra, report
    if report.infra_error:
        assert "\n" not in report.infra_error.reason and len(report.infra_error.reason) <= 240
    assert (ran.workspace / "answer.txt").exists() == edited
    if mode == "malformed":
        assert report.notes, "malformed output must say why there is no usage"
    assert not list(ran.workspace.glob(".aider*")), "tool files must stay out of the workspace"


def test_every_preset_has_every_case():
    for name in PRESETS:
        assert {m for n, m in CASES if n == name} >= {"success", "max_turns", "rate_limit",
                                                      "auth", "malformed"}, name


# --- the tool's own outcome ---------------------------------------------------------------------


def test_claude_outcome_reads_subtype_and_is_error(tmp_path):
    success = run_preset(tmp_path / "a", "claude-code").report
    assert dict(success.outcome) == {"subtype": "success", "is_error": False, "num_turns": 2,
                                     "stop_reason": "end_turn"}
    assert success.model == "claude-sonnet-4-5-20250929"
    limit = run_preset(tmp_path / "b", "claude-code", "max_turns").report
    assert (limit.outcome["subtype"], limit.outcome["is_error"], limit.outcome["num_turns"]) == (
        "error_max_turns", True, 3)
    assert limit.infra_error is None  # the agent's own limit: scored
    limited = run_preset(tmp_path / "c", "claude-code", "rate_limit").report
    # "success" with is_error: the subtype alone would call this a finished run.
    assert (limited.outcome["subtype"], limited.outcome["is_error"]) == ("success", True)
    assert limited.infra_error.reason == "rate limit or quota: API Error: Rate limit reached"


def test_outcomes_of_the_other_tools(tmp_path):
    codex = run_preset(tmp_path / "a", "codex", "max_turns").report
    assert codex.outcome["turns_failed"] == 1 and "context window" in codex.outcome["error"]
    gemini = run_preset(tmp_path / "b", "gemini", "max_turns").report
    assert (gemini.outcome["status"], gemini.outcome["error_code"]) == ("turn_limit", 53)
    aider = run_preset(tmp_path / "c", "aider", "max_turns").report
    assert dict(aider.outcome) == {"messages": 2, "reflections_exhausted": True}
    goose = run_preset(tmp_path / "d", "goose", "max_turns").report
    assert dict(goose.outcome) == {"completed": True, "max_turns": True}
    mini = run_preset(tmp_path / "e", "mini-swe-agent", "max_turns").report
    assert dict(mini.outcome) == {"exit_status": "LimitsExceeded", "api_calls": 2}


def test_hang_still_gives_claude_usage_so_far(tmp_path):
    """A run killed before the result line (timeout): the per-message usage is still read."""
    preset = PRESETS["claude-code"]
    partial = subprocess.run(
        [str(FAKE_BIN / "claude"), "-p", "--output-format", "stream-json", "--verbose",
         "--permission-mode", "bypassPermissions", "--", "x"],
        cwd=tmp_path, env={**os.environ, "FAKE_AGENT_MODE": "hang", "FAKE_AGENT_PYTHON":
                           sys.executable, "FAKE_AGENT_HANG_SECONDS": "0",
                           "ANTHROPIC_API_KEY": "sk-test-key"},
        capture_output=True, text=True, timeout=60, check=False).stdout
    report = preset.parse(partial, None, {})
    # Output unknown: the per-message events carry message_start's placeholder output count.
    assert (report.input_tokens, report.output_tokens, report.cost_usd) == (4512, None, None)
    assert report.tokens is None
    assert "no result object in output" in report.note and "output tokens and cost unknown" \
        in report.note


# --- argv and env -----------------------------------------------------------------------------


ARGV = {
    "claude-code": ["claude", "-p", "--output-format", "stream-json", "--verbose",
                    "--permission-mode", "bypassPermissions", "--model", "MODEL", "--extra", "1",
                    "--", PROMPT],
    "codex": ["codex", "exec", "--json", "--skip-git-repo-check",
              "--dangerously-bypass-approvals-and-sandbox", "--model", "MODEL", "--extra", "1",
              "--", PROMPT],
    "gemini": ["gemini", "--yolo", "--output-format", "json", "--model", "MODEL", "--extra", "1",
               f"--prompt={PROMPT}"],
    "aider": ["aider", "--message-file", "RUN/prompt.md", "--yes-always", "--no-auto-commits",
              "--no-dirty-commits", "--no-gitignore", "--no-pretty", "--no-stream",
              "--no-fancy-input", "--no-check-update", "--no-show-release-notes",
              "--analytics-disable", "--no-show-model-warnings",
              "--chat-history-file", "RUN/aider.chat.history.md",
              "--input-history-file", "RUN/aider.input.history", "--model", "MODEL",
              "--extra", "1"],
    "goose": ["goose", "run", "--instructions", "RUN/prompt.md", "--no-session",
              "--output-format", "stream-json", "--extra", "1"],
    "mini-swe-agent": ["mini-swe-agent", "--yolo", "--exit-immediately", f"--task={PROMPT}",
                       "--output", "RUN/mini-swe-agent.traj.json", "--model", "MODEL",
                       "--extra", "1"],
    "qwen-code": ["qwen", "--output-format", "stream-json", "--approval-mode", "yolo",
                  "--model", "MODEL", "--extra", "1", f"--prompt={PROMPT}"],
    "opencode": ["opencode", "run", "--format", "json", "--title", "ci-eval", "--model", "MODEL",
                 "--extra", "1", "--", PROMPT],
    "cline": ["cline", "--json", "--auto-approve", "true", "-m", "MODEL", "--extra", "1", "--",
              PROMPT],
    "copilot": ["copilot", "--allow-all-tools", "--output-format", "json", "--session-id",
                "SESSION", "--model", "MODEL", "--extra", "1", f"--prompt={PROMPT}"],
    "openhands": ["openhands", "--headless", "--json", "--override-with-envs", "--resume",
                  "0c1e7a1e-0000-4000-8000-000000000001", "-f", "RUN/prompt.md", "--extra", "1"],
}
FIXED_ENV = {
    "claude-code": {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
    "codex": {},
    "gemini": {"GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"},
    "aider": {},
    "goose": {"GOOSE_MODE": "auto", "GOOSE_DISABLE_KEYRING": "true",
              "GOOSE_PROVIDER": "anthropic", "GOOSE_MODEL": "MODEL"},
    "mini-swe-agent": {"MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors"},
    "qwen-code": {"QWEN_CODE_NO_RELAUNCH": "true"},
    "opencode": {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"},
    "cline": {},
    "copilot": {"COPILOT_AUTO_UPDATE": "false"},
    "openhands": {"LLM_MODEL": "MODEL", "OPENHANDS_SUPPRESS_BANNER": "1"},
}


@pytest.mark.parametrize("name", list(PRESETS))
def test_argv_and_env_as_built_and_as_received(tmp_path, name):
    model = "anthropic/MODEL" if name == "goose" else "MODEL"
    ran = run_preset(tmp_path, name, model=model, extra_args=("--extra", "1"))
    expected = [arg.replace("RUN", str(ran.run_dir)).replace("SESSION", session_id(str(ran.run_dir)))
                for arg in ARGV[name]]
    assert ran.argv == expected
    assert ran.exit_code == 0, ran.output  # the fake accepts exactly what the tool requires
    assert ran.received["argv"] == expected[1:] and ran.received["cwd"] == str(ran.workspace)
    assert (ran.workspace / "answer.txt").read_text() == "42\n"
    seen = ran.received["env"]
    for key, value in FIXED_ENV[name].items():
        assert seen[key] == value, key
    assert seen[KEYS[name]] == "sk-test-key"
    assert "UNRELATED_SECRET" not in seen  # only allow-listed names get through
    assert PRESETS[name].program == expected[0]


def test_goose_model_without_provider_sets_the_model_only():
    assert PRESETS["goose"].env("gpt-4o") == {"GOOSE_MODE": "auto", "GOOSE_DISABLE_KEYRING": "true",
                                               "GOOSE_MODEL": "gpt-4o"}
    assert PRESETS["goose"].env("openrouter/anthropic/claude-3.5")["GOOSE_MODEL"] == \
        "anthropic/claude-3.5"


def test_argv_without_model_or_args(tmp_path):
    argv = PRESETS["claude-code"].argv("p", "/r/prompt.md", "/w", "/r", None, ())
    assert "--model" not in argv and argv[-2:] == ["--", "p"]


def test_real_tool_requirements_are_checked_by_the_fakes(tmp_path):
    """The fakes refuse what the tools refuse: a wrong argv cannot pass the tests above."""
    env = {**os.environ, "FAKE_AGENT_PYTHON": sys.executable}
    no_verbose = subprocess.run([str(FAKE_BIN / "claude"), "-p", "--output-format", "stream-json",
                                 "--permission-mode", "bypassPermissions", "--", "x"],
                                cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert no_verbose.returncode == 1 and "requires --verbose" in no_verbose.stderr
    not_a_repo = subprocess.run([str(FAKE_BIN / "codex"), "exec", "--json", "--", "x"],
                                cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert not_a_repo.returncode == 1 and "--skip-git-repo-check" in not_a_repo.stderr


def test_missing_key_is_an_auth_infra_error_for_every_tool(tmp_path):
    """What each tool prints without a key is classified as auth (the fakes' auth mode), and
    preflight can tell beforehand: no key variable is set (config.env_problem)."""
    from ci_eval.agents.config import env_problem
    for name in PRESETS:
        # a model named where the tool has no default one (its own preflight refusal)
        problem = env_problem(preset_agent(name), {"PATH": "/usr/bin", "GOOSE_MODEL": "m",
                                                   "MSWEA_MODEL_NAME": "m", "LLM_MODEL": "m"})
        assert problem and KEYS[name] in problem, problem


# --- cost from the pricing table ------------------------------------------------------------------


def test_codex_cost_from_pricing(tmp_path):
    report = run_preset(tmp_path, "codex", model="gpt-5-codex").report
    assert report.cost_usd is None and report.cost_source is None
    priced = cost_from_pricing(report, "gpt-5-codex",
                               {"gpt-5-codex": ModelPrice(input=1.25, cached_input=0.125, output=10)})
    # (24763 - 24448) * 1.25 + 24448 * 0.125 + 122 * 10, per million
    assert priced.cost_usd == pytest.approx((315 * 1.25 + 24448 * 0.125 + 122 * 10) / 1e6)
    assert priced.cost_source == "pricing"
    assert cost_from_pricing(report, "other-model", {"gpt-5-codex": ModelPrice(1, 1)}).cost_usd is None


def test_gemini_is_priced_per_model(tmp_path):
    report = run_preset(tmp_path, "gemini").report
    assert [m.model for m in report.model_usage] == ["gemini-2.5-pro", "gemini-2.5-flash"]
    prices = {"gemini-2.5-pro": ModelPrice(input=1.25, cached_input=0.31, output=10),
              "gemini-2.5-flash": ModelPrice(input=0.3, cached_input=0.075, output=2.5)}
    priced = cost_from_pricing(report, None, prices)
    pro = (24939 - 21263) * 1.25 + 21263 * 0.31 + 274 * 10
    flash = 8993 * 0.3 + 40 * 2.5
    assert priced.cost_usd == pytest.approx((pro + flash) / 1e6)
    # One model without a price: the configured/main model's price for all tokens, else none.
    only_pro = cost_from_pricing(report, None, {"gemini-2.5-pro": prices["gemini-2.5-pro"]})
    assert only_pro.cost_source == "pricing"
    assert only_pro.cost_usd == pytest.approx(
        ((33932 - 21263) * 1.25 + 21263 * 0.31 + 314 * 10) / 1e6)


def test_the_pricing_table_wins_over_a_reported_cost_and_says_so(tmp_path):
    """Claude prices a model it does not know (a gateway's) at its defaults: a `pricing:` entry
    for the model is what the user means. Without one, the tool's own figure stands."""
    report = run_preset(tmp_path, "claude-code").report
    assert (report.cost_usd, report.cost_source) == (0.0123, "agent")
    priced = cost_from_pricing(report, None, {"claude-sonnet-4-5-20250929": ModelPrice(1, 10)})
    # modelUsage: 9116 input (7500 cached, 1600 cache write) and 100 output, all at 1 / 10 $/M
    assert priced.cost_source == "pricing"
    assert priced.cost_usd == pytest.approx((9116 * 1 + 100 * 10) / 1e6)
    assert "the tool's own cost $0.0123 replaced by ci-eval.yaml's pricing" in priced.note
    kept = cost_from_pricing(report, None, {"some-other-model": ModelPrice(100, 100)})
    assert (kept.cost_usd, kept.cost_source, kept.note) == (0.0123, "agent", report.note)
