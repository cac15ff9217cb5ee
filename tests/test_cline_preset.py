"""The cline preset's own decisions: the provider a `model:` names, the settings file written
into the run's HOME (with `base_url:`, the gateway's URL), and its reading of Cline's JSONL on
the real CLI's output (tests/fixtures/real_clis/cline-*) and on hostile variants of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval.agents.cline import SETTINGS_FILE, provider_and_model
from ci_eval.agents.config import AgentConfig
from ci_eval.agents.presets import PRESETS
from ci_eval.run.sandbox import home as home_mod

REAL = Path(__file__).resolve().parent / "fixtures" / "real_clis"
CLINE = PRESETS["cline"]


@pytest.mark.parametrize("model, expected", [
    (None, ("anthropic", None)),
    ("claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
    ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
    ("gpt-5", ("openai-native", "gpt-5")),
    ("openai/gpt-5", ("openai-native", "gpt-5")),
    ("openai-compatible/qwen3-coder", ("openai-compatible", "qwen3-coder")),
    ("openrouter/anthropic/claude-sonnet-4.5", ("openrouter", "anthropic/claude-sonnet-4.5")),
])
def test_the_model_names_the_provider(model, expected):
    assert provider_and_model(model) == expected


def _settings(files: dict) -> dict:
    return json.loads(files[SETTINGS_FILE])


def test_settings_select_the_provider_and_hold_no_key():
    settings = _settings(CLINE.home_files("anthropic/claude-sonnet-4-5"))
    assert settings["lastUsedProvider"] == "anthropic"
    entry = settings["providers"]["anthropic"]
    assert entry["settings"] == {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    assert "updatedAt" in entry  # without it Cline 3.0.65 ignores the entry (seen)
    assert "apiKey" not in json.dumps(settings)  # the key comes from ANTHROPIC_API_KEY


def test_a_gateway_goes_into_the_settings_and_openai_becomes_openai_compatible():
    anthropic = _settings(CLINE.gateway_home_files("http://gw:8080/v1", "claude-sonnet-4-5"))
    assert anthropic["providers"]["anthropic"]["settings"]["baseUrl"] == "http://gw:8080/v1"
    openai = _settings(CLINE.gateway_home_files("http://gw:8080/v1", "gpt-5"))
    assert openai["lastUsedProvider"] == "openai-compatible"
    assert openai["providers"]["openai-compatible"]["settings"] == {
        "provider": "openai-compatible", "baseUrl": "http://gw:8080/v1", "model": "gpt-5"}


def test_the_runs_home_gets_the_gateway_settings(tmp_path):
    agent = AgentConfig(name="c", command=None, preset="cline", model="gpt-5",
                        base_url="http://127.0.0.1:9/v1")
    env = home_mod.agent_home(agent, tmp_path / "own", {"HOME": str(tmp_path / "host")})
    assert env == {"HOME": str(tmp_path / "own")}
    written = json.loads((tmp_path / "own" / SETTINGS_FILE).read_text())
    assert written["providers"]["openai-compatible"]["settings"]["baseUrl"] == \
        "http://127.0.0.1:9/v1"
    plain = AgentConfig(name="c", command=None, preset="cline", model="gpt-5")
    home_mod.agent_home(plain, tmp_path / "plain", {})
    assert "baseUrl" not in (tmp_path / "plain" / SETTINGS_FILE).read_text()


def test_argv_puts_the_prompt_after_double_dash():
    argv = CLINE.argv("-x starts like an option", "/r/prompt.md", "/w", "/r", None, ())
    assert argv == ["cline", "--json", "--auto-approve", "true", "--", "-x starts like an option"]


def _line(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _result(usage: dict, **extra) -> str:
    return _line({"type": "run_result", "finishReason": "completed", "iterations": 2,
                  "usage": usage, "aggregateUsage": usage, "text": "Done.",
                  "model": {"id": "gpt-5", "provider": "openai-compatible"}, **extra})


def test_a_zero_cost_with_tokens_is_unknown_not_free():
    """Cline prices only the models of its list: an OpenAI-compatible model costs "0"."""
    report = CLINE.parse(_result({"inputTokens": 2000, "outputTokens": 100,
                                  "cacheReadTokens": 400, "cacheWriteTokens": 0,
                                  "totalCost": 0}), 0, {})
    assert (report.input_tokens, report.cached_input_tokens, report.output_tokens,
            report.tokens) == (2000, 400, 100, 2100)
    assert (report.cost_usd, report.cost_source, report.model) == (None, None, "gpt-5")
    assert report.outcome == {"finish_reason": "completed", "iterations": 2}


def test_a_known_price_is_the_agents_cost():
    report = CLINE.parse(_result({"inputTokens": 2000, "outputTokens": 100, "cacheReadTokens": 400,
                                  "cacheWriteTokens": 200, "totalCost": 0.00657}), 0, {})
    assert (report.cost_usd, report.cost_source, report.cache_write_tokens) == \
        (0.00657, "agent", 200)


@pytest.mark.parametrize("output", [
    "",
    "not json at all\n",
    _result({"inputTokens": "2000", "outputTokens": 100})[:60],
    _result({"inputTokens": -5, "outputTokens": 10**40, "totalCost": float("1e308")}),
    _result("not an object"),  # type: ignore[arg-type]
    _line({"type": "run_result", "finishReason": ["x"], "iterations": True, "usage": None}),
    "{" * 5000 + "\n",
])
def test_hostile_output_gives_no_usage_and_a_note(output):
    report = CLINE.parse(output, 0, {})
    assert report.tokens is None and report.cost_usd is None
    assert report.notes and report.infra_error is None


def test_model_text_cannot_claim_an_infrastructure_error():
    """Only an error event or run_result finishReason "error" is read as an error: a model
    answer that talks about a 429 is scored."""
    text = _line({"type": "agent_event", "event": {"type": "content_start", "text":
                                                   "API Error: 429 rate limit, 401 Unauthorized"}})
    report = CLINE.parse(text + "\n" + _result({"inputTokens": 10, "outputTokens": 5,
                                                "totalCost": 0.0001}), 0, {})
    assert report.infra_error is None and "error" not in report.outcome


def test_a_cut_connection_names_the_retries():
    report = CLINE.parse((REAL / "cline-3.0.65-cut.txt").read_text(), 1, {})
    assert report.infra_error.kind == "network"
    assert "socket connection was closed" in report.infra_error.reason
    assert "cline retried 1 time(s) after provider errors" in report.note


def test_error_class_auth_wins_over_the_wording():
    text = _line({"type": "agent_event", "event": {"type": "error", "errorClass": "auth",
                                                   "error": {"message": "something odd"}}})
    report = CLINE.parse(text, 1, {})
    assert report.infra_error.kind == "auth" and "something odd" in report.infra_error.reason
