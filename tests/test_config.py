"""ci-eval.yaml parsing: the accepted format, and errors naming file + field path."""

from __future__ import annotations

import pytest

from ci_eval.agents.config import AgentConfig, inline_agent
from ci_eval.agents.config_file import Config, load_config, parse_config, resolve_agent
from ci_eval.errors import UserError

FULL = """\
default_agent: claude
agents:
  claude:
    command: claude -p 'say "hi"' --max-turns 30
    timeout_seconds: 900
    env: [ANTHROPIC_API_KEY, ANTHROPIC_API_KEY]
    usage: file
  wrapper:
    command: [./scripts/agent.sh, --fast, 3]
    usage: none
checks:
  env: [MY_TOOL_HOME]
"""


def write(root, text):
    (root / "ci-eval.yaml").write_text(text)
    return root


def test_missing_and_empty_file(tmp_path):
    assert load_config(tmp_path) == Config()
    assert load_config(write(tmp_path, "")) == Config()
    assert load_config(write(tmp_path, "# only a comment\n")) == Config()
    assert load_config(write(tmp_path, "agents:\n")) == Config()


def test_full_config(tmp_path):
    config = load_config(write(tmp_path, FULL))
    assert config.default_agent == "claude"
    assert config.checks_env == ("MY_TOOL_HOME",)
    claude = config.agents["claude"]
    # No shell syntax: what bash would exec, run directly (see test_config_presets for scripts).
    assert claude.command == (
        "claude",
        "-p",
        'say "hi"',
        "--max-turns",
        "30",
    )
    assert (claude.shell, claude.script, claude.program) == (False, None, "claude")
    assert claude.timeout_seconds == 900.0
    assert claude.env == ("ANTHROPIC_API_KEY",)
    assert (claude.usage, claude.builtin, claude.identity) == ("file", None, "claude")
    wrapper = config.agents["wrapper"]
    assert wrapper.command == ("./scripts/agent.sh", "--fast", "3")  # a list is argv, no shell
    assert (wrapper.shell, wrapper.script, wrapper.program) == (False, None, "./scripts/agent.sh")
    assert (wrapper.timeout_seconds, wrapper.env, wrapper.usage) == (None, (), "none")


def test_resolve_agent(tmp_path):
    config = load_config(write(tmp_path, FULL))
    assert resolve_agent(config, None, None).name == "claude"
    assert resolve_agent(config, "wrapper", None).name == "wrapper"
    assert resolve_agent(config, "noop", None) == AgentConfig("noop", None, builtin="noop")
    with pytest.raises(UserError, match="no agent to run: name one with --agent NAME"):
        resolve_agent(Config(), None, None)  # never a silent fallback to reference
    assert resolve_agent(config, "claude", "echo hi").command == ("bash", "-c", "echo hi")  # builtin
    assert resolve_agent(config, "claude", "my-agent --x").command == ("my-agent", "--x")
    with pytest.raises(UserError, match=r"--agent: unknown agent 'x' \(known: claude, noop"):
        resolve_agent(config, "x", None)


def test_default_agent_may_be_builtin():
    assert parse_config({"default_agent": "noop"}).default_agent == "noop"


def test_inline_agent_errors():
    with pytest.raises(UserError, match="--agent-cmd"):
        inline_agent("   ")
    with pytest.raises(UserError, match="--agent-cmd: cannot split"):
        inline_agent("run 'unclosed")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"agnets": {}}, "ci-eval.yaml: agnets: unknown key (did you mean 'agents'? known: "),
        ({"baseline": "x"}, "ci-eval.yaml: baseline: unknown key (known: agents, default_agent"),
        ("text", 'ci-eval.yaml: expected a mapping at the top level, got "text"'),
        ({"agents": ["a"]}, "ci-eval.yaml: agents: expected a mapping of agent names"),
        ({"agents": {"my agent": {"command": "x"}}}, "ci-eval.yaml: agents.my agent: agent name"),
        ({"agents": {1: {"command": "x"}}}, "ci-eval.yaml: agents.1: agent name must be"),
        (
            {"agents": {"reference": {"command": "x"}}},
            "agents.reference: 'reference' is a built-in",
        ),
        (
            {"agents": {"a": None}},
            "ci-eval.yaml: agents.a: expected a mapping with a 'command', got null",
        ),
        ({"agents": {"a": {}}}, "ci-eval.yaml: agents.a.command: required key is missing"),
        (
            {"agents": {"a": {"command": None}}},
            "agents.a.command: expected a command (a string, or a list",
        ),
        (
            {"agents": {"a": {"command": ["x", None]}}},
            "agents.a.command[1]: expected a string, got null",
        ),
        (
            {"agents": {"a": {"command": ["", "y"]}}},
            "agents.a.command[0]: expected the program name",
        ),
        (
            {"agents": {"a": {"command": "x", "timeout_seconds": True}}},
            "agents.a.timeout_seconds: expected a positive number, got true",
        ),
        (
            {"agents": {"a": {"command": "x", "timeout_seconds": 0}}},
            "agents.a.timeout_seconds: expected a positive number, got 0",
        ),
        (
            {"agents": {"a": {"command": "x", "timeout_seconds": float("inf")}}},
            "agents.a.timeout_seconds: expected at most 86400 seconds (24 h), got Infinity",
        ),
        (
            {"agents": {"a": {"command": "x", "timeout_seconds": float("nan")}}},
            "agents.a.timeout_seconds: expected a positive number, got NaN",
        ),
        (
            {"agents": {"a": {"command": "x", "timeout_seconds": None}}},
            "agents.a.timeout_seconds: expected a positive number, got null",
        ),
        (
            {"agents": {"a": {"command": "x", "env": ["OK", "no-dash"]}}},
            (
                "agents.a.env[1]: expected an environment variable name (letters, digits, '_'), "
                'got "no-dash"'
            ),
        ),
        (
            {"agents": {"a": {"command": "x", "usage": True}}},
            "agents.a.usage: expected one of file, none, got true",
        ),
        (
            {"agents": {"a": {"command": "x", "Env": []}}},
            "agents.a.Env: unknown key (did you mean 'env'?",
        ),
        ({"default_agent": 3}, "ci-eval.yaml: default_agent: expected an agent name, got 3"),
        (
            {"default_agent": "ghost"},
            "ci-eval.yaml: default_agent: unknown agent 'ghost' (known: noop, reference)",
        ),
        ({"checks": ["env"]}, "ci-eval.yaml: checks: expected a mapping"),
        (
            {"checks": {"env": "X"}},
            'ci-eval.yaml: checks.env: expected a list of environment variable names, got "X"',
        ),
    ],
)
def test_parse_errors(data, message):
    with pytest.raises(UserError) as info:
        parse_config(data, "ci-eval.yaml")
    text = str(info.value)
    assert text.startswith("ci-eval.yaml: "), text
    assert message.removeprefix("ci-eval.yaml: ") in text, text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents:\n  a: {command: x\n", "ci-eval.yaml: line 3: invalid YAML"),
        ("agents:\n\ta: 1\n", "ci-eval.yaml: line 2: invalid YAML"),
        ("a: 1\na: 2\n", "ci-eval.yaml: line 2: duplicate key 'a'"),
        (
            "agents:\n  x: {command: a, command: b}\n",
            "ci-eval.yaml: line 2: duplicate key 'command'",
        ),
    ],
)
def test_yaml_errors(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    with pytest.raises(UserError) as info:
        load_config(".")
    assert str(info.value).startswith(message), str(info.value)


def test_merge_keys_are_not_duplicates(tmp_path):
    text = (
        "agents:\n"
        "  base: &base {command: run, timeout_seconds: 60}\n"
        "  slow:\n    <<: *base\n    timeout_seconds: 600\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.agents["slow"].timeout_seconds == 600.0
    assert config.agents["slow"].command == ("run",)


def test_not_utf8(tmp_path):
    (tmp_path / "ci-eval.yaml").write_bytes(b"agents: \xff\n")
    with pytest.raises(UserError, match="not UTF-8"):
        load_config(tmp_path)


def test_error_names_path_under_root(tmp_path):
    write(tmp_path, "nope: 1\n")
    with pytest.raises(UserError, match=f"^{tmp_path}/ci-eval.yaml: nope: unknown key"):
        load_config(tmp_path)
