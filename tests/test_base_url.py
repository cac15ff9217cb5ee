"""ci-eval.yaml `base_url:` per preset agent: validated (file and field named), and turned into each
tool's own setting (issue #20 item 10: codex ignores OPENAI_BASE_URL and needs -c openai_base_url)."""

from __future__ import annotations

import pytest

from ci_eval.agents.config_file import parse_config
from ci_eval.agents.presets import PRESETS
from ci_eval.errors import UserError

URL = "http://127.0.0.1:8080/v1"


def agent(base_url, preset="codex", **extra):
    config = parse_config({"agents": {"gw": {"preset": preset, "base_url": base_url, **extra}}},
                          "ci-eval.yaml")
    return config.agents["gw"]


def test_base_url_is_kept():
    assert agent(URL).base_url == URL
    assert agent("https://gateway.example.com").base_url == "https://gateway.example.com"


@pytest.mark.parametrize(("value", "message"), [
    ("ftp://host/v1", "expected an http:// or https:// URL"),
    ("http://", "expected an http:// or https:// URL"),
    ("127.0.0.1:8080", "expected an http:// or https:// URL"),
    ('http://host/"v1', "expected an http:// or https:// URL"),
    ("http://host/ v1", "expected an http:// or https:// URL"),
    ("http://host:port/v1", "expected an http:// or https:// URL"),
    (8080, "(e.g. http://127.0.0.1:8080/v1), got 8080"),
    ("http://user:secret@host/v1", "expected a URL without credentials"),
    ("http://host/v1?key=x", "without a query or fragment"),
])
def test_bad_base_url_names_file_and_field(value, message):
    with pytest.raises(UserError) as info:
        agent(value)
    text = str(info.value)
    assert text.startswith("ci-eval.yaml: agents.gw.base_url: "), text
    assert message in text and "\n" not in text


def test_base_url_is_for_presets_only():
    with pytest.raises(UserError, match=r"agents\.gw\.base_url: only for a preset agent"):
        parse_config({"agents": {"gw": {"command": "./a.sh", "base_url": URL}}}, "ci-eval.yaml")


@pytest.mark.parametrize(("preset", "model", "expected"), [
    ("claude-code", None, {"ANTHROPIC_BASE_URL": URL}),
    ("gemini", None, {"GOOGLE_GEMINI_BASE_URL": URL}),
    ("codex", None, {}),
    ("aider", "anthropic/claude-sonnet-4-20250514", {"ANTHROPIC_API_BASE": URL}),
    ("aider", "openai/gpt-4o", {"OPENAI_API_BASE": URL, "OPENAI_BASE_URL": URL}),
    ("mini-swe-agent", "gemini/gemini-2.5-pro", {"GEMINI_API_BASE": URL}),
    ("mini-swe-agent", None, {"OPENAI_API_BASE": URL, "OPENAI_BASE_URL": URL}),
    ("goose", "anthropic/claude-sonnet-4-5", {"ANTHROPIC_HOST": URL}),
])
def test_each_preset_sets_its_own_variable(preset, model, expected):
    assert PRESETS[preset].gateway_env(URL, model) == expected


def test_codex_gets_its_config_override_before_the_prompt():
    codex = PRESETS["codex"]
    args = tuple(codex.gateway_args(URL))
    assert args == ("-c", f'openai_base_url="{URL}"')
    argv = codex.argv("- the prompt", "/p", "/ws", "/run", "gpt-5-codex", args + ("--foo",))
    assert argv[-2:] == ["--", "- the prompt"]
    assert argv.index("-c") < argv.index("--foo") < argv.index("--")


def test_a_bad_base_url_stops_the_run_with_exit_2(repo_root, make_task, cli):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(
        "agents:\n  gw:\n    preset: codex\n    base_url: localhost:8080\n")
    ran = cli("run", "--agent", "gw", "-k", "1", cwd=repo_root)
    assert ran.returncode == 2, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "ci-eval.yaml: agents.gw.base_url: expected an http:// or " \
        "https:// URL" in lines[0], ran.stderr
    assert not (repo_root / "results").exists()
