"""The copilot preset's own decisions: its session id and log path per run, the own-provider
variables `base_url:` sets, and its reading of the session log and of stdout (the real CLI's
error outputs are in tests/fixtures/real_clis/copilot-*, read by test_presets_real_outputs)."""

from __future__ import annotations

import json

import pytest

from ci_eval.agents.copilot import session_id
from ci_eval.agents.presets import PRESETS

COPILOT = PRESETS["copilot"]


def test_each_run_has_its_own_session_and_log_in_its_own_home(tmp_path):
    one, two = str(tmp_path / "run-1"), str(tmp_path / "run-2")
    assert session_id(one) != session_id(two) and session_id(one) == session_id(one)
    argv = COPILOT.argv("-p looks like an option", "/r/prompt.md", "/w", one, None, ())
    assert argv[argv.index("--session-id") + 1] == session_id(one)
    assert argv[-1] == "--prompt=-p looks like an option"
    assert COPILOT.output_files(one) == {"events": f"{one}/home/.copilot/session-state/"
                                                   f"{session_id(one)}/events.jsonl"}


@pytest.mark.parametrize("model, kind", [("claude-sonnet-4-5", "anthropic"), ("gpt-5", "openai"),
                                         (None, "openai")])
def test_a_gateway_is_copilots_own_provider(model, kind):
    assert COPILOT.gateway_env("http://gw:8080", model) == {
        "COPILOT_PROVIDER_BASE_URL": "http://gw:8080", "COPILOT_PROVIDER_TYPE": kind,
        "COPILOT_OFFLINE": "true"}


def _record(inp, out, read=0, write=0, model="claude-sonnet-4.5") -> str:
    return json.dumps({"type": "session.usage_record", "data": {"usage": {
        "model": model, "inputTokens": inp, "outputTokens": out, "cacheReadTokens": read,
        "cacheWriteTokens": write, "cost": 1.0}}})


RESULT = json.dumps({"type": "result", "exitCode": 0, "usage": {"premiumRequests": 1}})


def test_usage_is_summed_from_the_session_log_and_its_cost_is_not_dollars():
    log = _record(1000, 50, 200, 100) + "\n" + _record(1000, 50, 200, 100) + "\n"
    report = COPILOT.parse(RESULT, 0, {"events": log})
    assert (report.input_tokens, report.cached_input_tokens, report.cache_write_tokens,
            report.output_tokens, report.tokens) == (2000, 400, 200, 100, 2100)
    assert report.cost_usd is None and report.model == "claude-sonnet-4.5"
    assert report.outcome == {"turns": 0, "premium_requests": 1}


def test_without_the_session_log_usage_is_unknown_and_said_so():
    report = COPILOT.parse(RESULT, 0, {})
    assert report.tokens is None and "no session log: usage unknown" in report.note


@pytest.mark.parametrize("log", ["{" * 3000, _record("1000", 50), _record(-1, 50),
                                 json.dumps({"type": "session.usage_record", "data": [1]}),
                                 _record(10**40, 1)])
def test_a_hostile_session_log_gives_no_usage(log):
    report = COPILOT.parse(RESULT, 0, {"events": log})
    assert report.tokens is None and report.notes


def test_model_text_cannot_claim_an_infrastructure_error():
    text = json.dumps({"type": "assistant.message", "data": {
        "content": "Authentication failed (HTTP 401); 429 rate limit"}})
    report = COPILOT.parse(text + "\n" + RESULT, 0, {"events": _record(10, 5)})
    assert report.infra_error is None and "error" not in report.outcome


@pytest.mark.parametrize("error, kind", [
    ({"errorType": "authentication", "message": "x"}, "auth"),
    ({"errorType": "query", "message": "x", "statusCode": 404}, "setup"),
    ({"errorType": "query", "message": "x", "statusCode": 529}, "overloaded"),
    ({"errorType": "query", "message": "x", "statusCode": 599}, "overloaded"),
    ({"errorType": "query", "message": "Connection reset by peer [ECONNRESET]"}, "network"),
    ({"errorType": "query", "message": "the model gave up"}, None),
])
def test_session_errors_by_type_status_and_wording(error, kind):
    text = json.dumps({"type": "session.error", "data": error}) + "\n" + RESULT
    report = COPILOT.parse(text, 1, {})
    assert (report.infra_error.kind if report.infra_error else None) == kind
