"""ci-eval.yaml for presets, command strings, budgets and prices: the accepted format, identity,
and one error test per new key (one line naming the file and the field)."""

from __future__ import annotations

import pytest

from ci_eval.agents.budget import Budget
from ci_eval.agents.config import (
    BASE_ENV_ALLOWLIST,
    AgentConfig,
    env_problem,
    inline_agent,
    preset_agent,
    visible_env,
)
from ci_eval.agents.config_file import Config, load_config, parse_config, resolve_agent
from ci_eval.agents.presets import PRESETS
from ci_eval.agents.pricing import ModelPrice
from ci_eval.agents.shell import first_program, plain_argv, unclosed_quote
from ci_eval.errors import UserError

CONFIG = """\
default_agent: sonnet
agents:
  sonnet:
    preset: claude-code
    model: claude-sonnet-4-5
    args: [--max-turns, 30]
    env: [ANTHROPIC_BASE_URL]
    timeout_seconds: 1200
  codex:
    preset: codex
  piped:
    command: cat "$CI_EVAL_PROMPT_FILE" | my-agent --stdin > "$CI_EVAL_USAGE_FILE"
budget:
  max_cost_usd: 20
  max_cost_usd_per_run: 2.5
  max_runs: 50
pricing:
  gpt-5-codex: {input: 1.25, cached_input: 0.125, output: 10}
  local-llama: {input: 0, output: 0}
"""


def write(root, text):
    (root / "ci-eval.yaml").write_text(text)
    return root


def test_full_preset_config(tmp_path):
    config = load_config(write(tmp_path, CONFIG))
    sonnet = config.agents["sonnet"]
    assert sonnet == AgentConfig(name="sonnet", command=None, timeout_seconds=1200.0,
                                 env=("ANTHROPIC_BASE_URL",), preset="claude-code",
                                 model="claude-sonnet-4-5", args=("--max-turns", "30"))
    assert sonnet.identity == "sonnet:claude-sonnet-4-5"
    assert sonnet.program == "claude"
    codex = config.agents["codex"]
    assert (codex.preset, codex.model, codex.identity) == ("codex", None, "codex")
    piped = config.agents["piped"]
    assert piped.shell and piped.command[:2] == ("bash", "-c")
    assert piped.script.startswith('cat "$CI_EVAL_PROMPT_FILE" |')
    assert piped.program == "cat"
    assert config.budget == Budget(max_cost_usd=20.0, max_cost_usd_per_run=2.5, max_runs=50)
    assert config.pricing == {"gpt-5-codex": ModelPrice(1.25, 10.0, cached_input=0.125),
                              "local-llama": ModelPrice(0.0, 0.0)}
    assert resolve_agent(config, None, None) is sonnet


def test_presets_by_name_need_no_configuration():
    for name in ("claude-code", "codex", "gemini", "aider", "goose", "mini-swe-agent"):
        agent = resolve_agent(Config(), name, None)
        assert agent == preset_agent(name) and agent.identity == name
    assert parse_config({"default_agent": "gemini"}).default_agent == "gemini"


def test_an_entry_may_take_a_preset_name_and_wins():
    config = parse_config({"agents": {"codex": {"preset": "codex", "model": "o3"}}})
    assert resolve_agent(config, "codex", None).identity == "codex:o3"


def test_existing_identities_do_not_change():
    config = parse_config({"agents": {"claude": {"command": "claude -p hi"}}})
    assert resolve_agent(config, "claude", None).identity == "claude"
    assert inline_agent("bash agent.sh").identity == "cmd:bash agent.sh"
    assert resolve_agent(Config(), "noop", None).identity == "noop"


def test_agent_cmd_is_a_bash_string():
    agent = inline_agent('my-agent "$CI_EVAL_TASK_ID" > out.txt')
    assert agent.command == ("bash", "-c", 'my-agent "$CI_EVAL_TASK_ID" > out.txt')
    assert agent.shell and agent.program == "my-agent"
    assert inline_agent("cat $CI_EVAL_PROMPT_FILE").command == (
        "bash", "-c", "cat $CI_EVAL_PROMPT_FILE")  # the $VAR is expanded now
    with pytest.raises(UserError, match=r"^--agent-cmd: cannot split the command like a shell "
                                        r"would \(unclosed \" quote\)$"):
        inline_agent('echo "unclosed')


def test_unknown_agent_names_presets_and_suggests():
    with pytest.raises(UserError) as info:
        resolve_agent(Config(), "claude-cod", None)
    message = str(info.value)
    assert message.startswith("--agent: unknown agent 'claude-cod' (known: noop, reference), "
                              f"presets: {', '.join(sorted(PRESETS))}")
    assert message.endswith("did you mean 'claude-code'?")


def test_visible_env_and_env_problem():
    agent = parse_config({"agents": {"c": {"preset": "claude-code", "env": ["EXTRA"]}}}).agents["c"]
    names = visible_env(agent)
    assert names[:len(BASE_ENV_ALLOWLIST)] == BASE_ENV_ALLOWLIST
    assert {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL", "EXTRA"} <= set(names)
    assert "OPENAI_API_KEY" not in names
    assert env_problem(agent, {"EXTRA": "1", "CLAUDE_CODE_OAUTH_TOKEN": "t"}) is None
    assert env_problem(agent, {"ANTHROPIC_API_KEY": "k"}) == (
        "agent c: environment variable EXTRA is not set (listed in its env)")
    assert "set one of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN" in env_problem(
        agent, {"EXTRA": "1", "ANTHROPIC_API_KEY": ""})
    command = parse_config({"agents": {"w": {"command": "x", "env": ["TOKEN"]}}}).agents["w"]
    assert env_problem(command, {}) == "agent w: environment variable TOKEN is not set (listed in its env)"
    assert env_problem(inline_agent("x"), {}) is None


def test_budget_overrides():
    budget = Budget(max_cost_usd=20.0, max_runs=50)
    assert budget.overridden(max_runs=3, max_cost_usd=None) == Budget(max_cost_usd=20.0, max_runs=3)
    assert Budget().unlimited and not budget.unlimited
    with pytest.raises(TypeError):
        budget.overridden(max_tokens=1)


@pytest.mark.parametrize(("data", "message"), [
    ({"agents": {"a": {"command": "x", "preset": "codex"}}},
     "agents.a.preset: cannot be given with 'command': an agent is a preset or a command"),
    ({"agents": {"a": {"preset": "claud-code"}}},
     "agents.a.preset: unknown preset 'claud-code' (did you mean 'claude-code'? known: aider, "),
    ({"agents": {"a": {"preset": 3}}}, "agents.a.preset: expected a preset name, got 3"),
    ({"agents": {"a": {"timeout_seconds": 5}}},
     "agents.a.command: required key is missing (the agent's command, or a preset: aider, "),
    ({"agents": {"a": {"preset": "codex", "model": ""}}},
     "agents.a.model: expected a model name (one word), got \"\""),
    ({"agents": {"a": {"preset": "codex", "model": "two words"}}},
     "agents.a.model: expected a model name (one word)"),
    ({"agents": {"a": {"preset": "codex", "model": 4}}}, "agents.a.model: expected a model name"),
    ({"agents": {"a": {"command": "x", "model": "o3"}}},
     "agents.a.model: only for a preset agent (a command chooses its own model, arguments and gateway"),
    ({"agents": {"a": {"command": "x", "args": ["-v"]}}}, "agents.a.args: only for a preset agent"),
    ({"agents": {"a": {"preset": "codex", "args": "-v"}}},
     "agents.a.args: expected a list of arguments, got \"-v\""),
    ({"agents": {"a": {"preset": "codex", "args": ["-v", None]}}},
     "agents.a.args[1]: expected a string, got null"),
    ({"agents": {"a": {"preset": "codex", "usage": "file"}}},
     "agents.a.usage: only for a command agent (a preset reads usage from its tool's output)"),
    ({"agents": {"a": {"preset": "codex", "env": "KEY"}}},
     "agents.a.env: expected a list of environment variable names"),
    ({"agents": {"a": {"preset": "codex", "timeout_seconds": 0}}},
     "agents.a.timeout_seconds: expected a positive number, got 0"),
    ({"agents": {"a": {"preset": "codex", "modle": "o3"}}},
     "agents.a.modle: unknown key (did you mean 'model'?"),
    ({"agents": {"a": {"command": "claude -p 'hi"}}},
     "agents.a.command: cannot split the command like a shell would (unclosed ' quote)"),
    ({"agents": {"a": {"command": "   "}}}, "agents.a.command: expected a command, got an empty"),
    ({"default_agent": "claud"}, "default_agent: unknown agent 'claud' (known: noop, reference), presets: "),
    ({"budget": 5}, "budget: expected a mapping (max_cost_usd, max_cost_usd_per_run, max_runs), got 5"),
    ({"budget": {"max_cost": 5}}, "budget.max_cost: unknown key (did you mean 'max_cost_usd'?"),
    ({"budget": {"max_cost_usd": 0}}, "budget.max_cost_usd: expected a positive number, got 0"),
    ({"budget": {"max_cost_usd": "ten"}}, "budget.max_cost_usd: expected a positive number, got \"ten\""),
    ({"budget": {"max_cost_usd": float("inf")}}, "budget.max_cost_usd: expected a positive number"),
    ({"budget": {"max_cost_usd_per_run": -1}}, "budget.max_cost_usd_per_run: expected a positive number, got -1"),
    ({"budget": {"max_runs": 2.5}}, "budget.max_runs: expected a whole number >= 1, got 2.5"),
    ({"budget": {"max_runs": 0}}, "budget.max_runs: expected a whole number >= 1, got 0"),
    ({"budget": {"max_runs": True}}, "budget.max_runs: expected a whole number >= 1, got true"),
    ({"pricing": ["gpt"]}, "pricing: expected a mapping of model names to prices"),
    ({"pricing": {"gpt": 3}}, "pricing.gpt: expected a mapping with input and output"),
    ({"pricing": {"gpt": {"input": 1}}}, "pricing.gpt.output: required key is missing"),
    ({"pricing": {"gpt": {"input": -1, "output": 1}}}, "pricing.gpt.input: expected a number >= 0, got -1"),
    ({"pricing": {"gpt": {"input": 1, "output": "x"}}}, "pricing.gpt.output: expected a number >= 0, got \"x\""),
    ({"pricing": {"gpt": {"input": 1, "output": 1, "cache_read": 1}}},
     "pricing.gpt.cache_read: unknown key (did you mean 'cached_input'? known: input, "),
    ({"pricing": {5: {"input": 1, "output": 1}}}, "pricing.5: expected a model name, got 5"),
])
def test_new_key_errors(data, message):
    with pytest.raises(UserError) as info:
        parse_config(data, "ci-eval.yaml")
    text = str(info.value)
    assert text.startswith("ci-eval.yaml: ") and "\n" not in text, text
    assert message in text, text


def test_whole_number_budget_accepts_a_float_that_is_whole():
    assert parse_config({"budget": {"max_runs": 3.0}}).budget.max_runs == 3


def test_bad_preset_config_through_the_cli(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text("agents:\n  a: {preset: codexx}\n")
    line = assert_bad_input(cli("validate", cwd=repo_root), "ci-eval.yaml", "agents.a.preset",
                            "did you mean 'codex'")
    assert line.startswith("ci-eval.yaml: ")


# --- command strings ------------------------------------------------------------------------------


@pytest.mark.parametrize("script", [
    "claude -p \"$(cat \"$CI_EVAL_PROMPT_FILE\")\"",
    "echo $'it\\'s' # it's a comment",
    "echo \"a ) b\" | tr a b",
    "cat <<'EOF'\nit's here\nEOF",
    "echo `echo \"x\"`",
    "echo $((1 + 2)) 'ok'",
    "echo \"$(echo \")\")\"",
    "printf '%s\\n' \"a\\\"b\"",
])
def test_valid_bash_is_never_refused(script):
    assert unclosed_quote(script) is None


@pytest.mark.parametrize(("script", "problem"), [
    ("claude -p 'hi", "unclosed ' quote"),
    ('echo "hi', 'unclosed " quote'),
    ("echo \"$(echo 'x)\"", "unclosed ' quote"),
    ("echo $'abc", "unclosed ' quote"),
])
def test_unclosed_quotes(script, problem):
    assert unclosed_quote(script) == problem


@pytest.mark.parametrize(("script", "argv"), [
    ("./agents/claude.sh --max-turns 30", ("./agents/claude.sh", "--max-turns", "30")),
    ("claude -p 'say \"hi\"'", ("claude", "-p", 'say "hi"')),
    ("my-agent --model=x", ("my-agent", "--model=x")),
    ("FOO=1 my-agent", None),
    ("cd sub", None),
    ("echo hi", None),
    ("my-agent *.py", None),
    ("my-agent ~/x", None),
    ("my-agent $HOME", None),
    ("my-agent a\\ b", None),
    ("my-agent; other", None),
    ("a\nb", None),
])
def test_plain_strings_run_directly(script, argv):
    """Without shell syntax bash would just exec the words: they are kept as argv."""
    assert plain_argv(script) == argv


@pytest.mark.parametrize(("script", "program"), [
    ("claude -p hi", "claude"),
    ("  FOO=1 BAR=x ./agents/run.sh --fast", "./agents/run.sh"),
    ("python3 agent.py; echo done", "python3"),
    ("cd sub && make", None),
    ("\"quoted prog\" x", None),
    ("$AGENT --x", None),
    ("if true; then x; fi", None),
    ("echo hi > x", None),
])
def test_first_program(script, program):
    assert first_program(script) == program


def test_a_login_file_stands_in_for_a_key_variable(tmp_path):
    """`claude login`, `codex login` and Gemini's OAuth write a file and set no variable."""
    agents = parse_config({"agents": {name: {"preset": name} for name in
                                      ("claude-code", "codex", "gemini", "aider")}}).agents
    home = str(tmp_path)
    assert env_problem(agents["claude-code"], {"HOME": home}).endswith(
        f"(set one of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_AUTH_TOKEN, "
        f"CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX, or log in with claude "
        f"(no {home}/.claude/.credentials.json))")
    assert "log in" not in env_problem(agents["claude-code"], {})  # no HOME, no file to name
    assert "log in" not in env_problem(agents["aider"], {"HOME": home})  # aider has none
    (tmp_path / ".claude" / ".credentials.json").mkdir(parents=True)  # a folder is no login
    assert env_problem(agents["claude-code"], {"HOME": home}) is not None
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "oauth_creds.json").write_text("{}")
    assert env_problem(agents["gemini"], {"HOME": home}) is None
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")  # moved away by CODEX_HOME: not read
    moved = {"HOME": home, "CODEX_HOME": str(codex_home)}
    assert f"(no {codex_home}/auth.json)" in env_problem(agents["codex"], moved)
    (codex_home / "auth.json").write_text("{}")
    assert env_problem(agents["codex"], moved) is None
    assert env_problem(agents["codex"], {"HOME": home}) is None
