"""Presets on what the real CLIs printed (no processes): tests/fixtures/real_clis/ holds the
stdout+stderr of Claude Code 2.1.332 (its cut-stream case: 2.1.197), codex-cli 0.171.0, gemini-cli 0.61.0, aider 0.86.2,
Qwen Code 0.24.4 and opencode 1.18.33,
each run against tests/fake_models in one of its modes (the file name says which), with the exit
code it gave. Each case is one of issue #20's findings on the real tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.agents.presets import PRESETS

REAL = Path(__file__).resolve().parent / "fixtures" / "real_clis"


def parse(preset: str, name: str, exit_code: int | None):
    return PRESETS[preset].parse((REAL / f"{name}.txt").read_text(), exit_code, {})


def usage(report) -> tuple:
    return (report.input_tokens, report.cached_input_tokens, report.cache_write_tokens,
            report.output_tokens, report.tokens)


# (preset, fixture, exit code) -> infra kind (None: scored), usage (input, cached, cache write,
# output, tokens) or None to skip that check
CASES = {
    # item 4: after a cut stream Claude retried without streaming; `usage` is all zeros
    # (2.1.197: kept, as the reading of modelUsage stays for teams on older pins)
    ("claude-code", "claude-2.1.197-cut-stream", 0): (None, (2000, 400, 200, 100, 2100)),
    # 2.1.332 falls back the same way, and its result `usage` now counts every answer
    ("claude-code", "claude-2.1.332-cut-stream", 0): (None, (2000, 400, 200, 100, 2100)),
    # a 429 Claude retried past
    ("claude-code", "claude-2.1.332-transient-429", 0): (None, (2000, 400, 200, 100, 2100)),
    # item 3: a misspelled model is a setup error, not a fail
    ("claude-code", "claude-2.1.332-404", 1): ("setup", None),
    ("claude-code", "claude-2.1.332-401", 1): ("auth", None),
    # 2.1.332: a lost connection is an assistant message with "api_error":"connection_failed"
    # and no HTTP status
    ("claude-code", "claude-2.1.332-cut", 1): ("network", None),
    # item 1: a gateway answering 503 to the WebSocket upgrade; codex fell back to HTTP and
    # completed. item 8: cache writes read.
    ("codex", "codex-0.171.0-websocket-503", 0): (None, (2000, 400, 200, 100, 2100)),
    # item 1: one 429 codex retried past
    ("codex", "codex-0.171.0-websocket-503-then-429", 0): (None, (2000, 400, 200, 100, 2100)),
    ("codex", "codex-0.171.0-404", 1): ("setup", None),
    ("codex", "codex-0.171.0-429", 1): ("rate_limit", None),
    ("codex", "codex-0.171.0-cut", 1): ("network", None),
    # item 2: a cut connection ("terminated", SocketError: other side closed)
    ("gemini", "gemini-0.61.0-cut", 1): ("network", None),
    ("gemini", "gemini-0.61.0-404", 1): ("setup", None),
    ("gemini", "gemini-0.61.0-401", 145): ("auth", None),  # exit code: HTTP 401 mod 256
    # item 6: "1.1k sent, 100 cache write, 200 cache hit": sent counted the writes twice
    ("aider", "aider-0.86.2-anthropic-cache", 0): (None, (1000, 200, 100, 50, 1050)),
    # litellm.NotFoundError (its message wraps onto the next line): setup, not a fail
    ("aider", "aider-0.86.2-404", 0): ("setup", None),
    # litellm.InternalServerError: … Connection reset by peer: network, not overloaded
    ("aider", "aider-0.86.2-cut", 0): ("network", None),
    # Qwen Code 0.24.4: "[API Error: STATUS …]" in the result's error.message, exit 1; the
    # same text as an assistant message is not read
    ("qwen-code", "qwen-0.24.4-401", 1): ("auth", (0, 0, None, 0, 0)),
    ("qwen-code", "qwen-0.24.4-404", 1): ("setup", None),
    ("qwen-code", "qwen-0.24.4-429", 1): ("rate_limit", None),
    ("qwen-code", "qwen-0.24.4-500", 1): ("overloaded", None),
    # "[API Error: terminated (cause: UND_ERR_SOCKET: other side closed)]" after 2 replays
    ("qwen-code", "qwen-0.24.4-cut", 1): ("network", None),
    # --max-session-turns 1: no result line, exit 53; the answered message's usage is summed
    ("qwen-code", "qwen-0.24.4-turn-limit", 53): (None, (1000, 200, None, 50, 1050)),
    # opencode 1.18.33 (Anthropic Messages; the solve over the OpenAI Responses API): an
    # APIError event with the HTTP status in data.statusCode, exit 1
    ("opencode", "opencode-1.18.33-401", 1): ("auth", None),
    ("opencode", "opencode-1.18.33-404", 1): ("setup", None),
    ("opencode", "opencode-1.18.33-429", 1): ("rate_limit", None),
    ("opencode", "opencode-1.18.33-500", 1): ("overloaded", None),
    # "Cannot connect to API: The socket connection was closed unexpectedly": no status
    ("opencode", "opencode-1.18.33-cut", 1): ("network", None),
    ("opencode", "opencode-1.18.33-solve-openai", 0): (None, (2000, 400, 200, 100, 2100)),
    # Cline 3.0.65 against the OpenAI-compatible fake: an error event (errorClass "auth" only for
    # the 401), run_result finishReason "error" with zero usage
    ("cline", "cline-3.0.65-401", 1): ("auth", (0, 0, 0, 0, 0)),
    ("cline", "cline-3.0.65-404", 1): ("setup", (0, 0, 0, 0, 0)),
    ("cline", "cline-3.0.65-429", 1): ("rate_limit", (0, 0, 0, 0, 0)),
    ("cline", "cline-3.0.65-5xx", 1): ("overloaded", (0, 0, 0, 0, 0)),
    ("cline", "cline-3.0.65-cut", 1): ("network", (0, 0, 0, 0, 0)),
    # the Anthropic provider's 404: Cline passes on only the API's message "model: NAME"
    ("cline", "cline-3.0.65-anthropic-404", 1): ("setup", (0, 0, 0, 0, 0)),
    # a solve with the Anthropic provider: inputTokens counts the cache reads and writes
    ("cline", "cline-3.0.65-anthropic-solve", 0): (None, (2000, 400, 200, 100, 2100)),
    # Copilot CLI 1.0.102 with its own-provider settings against the OpenAI-compatible fake: a
    # session.error {errorType, message, statusCode} after its own 5 retries; exit 1
    ("copilot", "copilot-1.0.102-401", 1): ("auth", None),
    ("copilot", "copilot-1.0.102-404", 1): ("setup", None),
    ("copilot", "copilot-1.0.102-429", 1): ("rate_limit", None),
    ("copilot", "copilot-1.0.102-5xx", 1): ("overloaded", None),
    ("copilot", "copilot-1.0.102-cut", 1): ("network", None),
}


@pytest.mark.parametrize(("preset", "name", "exit_code"), list(CASES), ids=[c[1] for c in CASES])
def test_real_output(preset, name, exit_code):
    kind, expected = CASES[(preset, name, exit_code)]
    report = parse(preset, name, exit_code)
    assert (report.infra_error.kind if report.infra_error else None) == kind, report
    if expected is not None:
        assert usage(report) == expected, report


def test_claude_cut_stream_reads_model_usage_and_says_so():
    report = parse("claude-code", "claude-2.1.197-cut-stream", 0)
    assert (report.cost_usd, report.cost_source) == (0.00657, "agent")
    assert "tokens from modelUsage" in report.note


def test_claude_2_1_332_cut_stream_reads_usage_itself():
    report = parse("claude-code", "claude-2.1.332-cut-stream", 0)
    assert (report.cost_usd, report.cost_source, report.note) == (0.00657, "agent", "")


def test_claude_404_reason_names_the_model_problem():
    report = parse("claude-code", "claude-2.1.332-404", 1)
    assert report.infra_error.reason.startswith("model not found (HTTP 404): There's an issue with "
                                                "the selected model")
    assert report.outcome["api_error_status"] == 404


def test_claude_killed_mid_run_records_output_as_unknown():
    """Item 5: no result object (killed at the timeout): one assistant message's input counts
    are right, its output count (1) is message_start's placeholder: output and total unknown."""
    report = parse("claude-code", "claude-2.1.332-killed", None)
    assert usage(report) == (1000, 200, 100, None, None)
    assert "output tokens and cost unknown" in report.note and report.cost_usd is None


def test_codex_retries_it_got_past_are_a_note_not_an_error():
    report = parse("codex", "codex-0.171.0-websocket-503-then-429", 0)
    assert report.infra_error is None and "error" not in report.outcome
    assert "codex retried 5 time(s) and completed" in report.note


def test_codex_giving_up_is_read_from_its_last_words():
    report = parse("codex", "codex-0.171.0-cut", 1)
    assert "stream disconnected" in report.infra_error.reason
    assert report.outcome["turns_completed"] == 0


def test_gemini_cut_reason_names_the_socket_error():
    report = parse("gemini", "gemini-0.61.0-cut", 1)
    assert report.infra_error.reason == ("connection cut (SocketError: other side closed): "
                                         "gemini reported 'terminated'")


def test_gemini_terminated_without_error_reported_is_not_infrastructure():
    """The socket words count only when gemini itself reported an error (exit != 0)."""
    text = (REAL / "gemini-0.61.0-cut.txt").read_text()
    assert PRESETS["gemini"].parse(text, 0, {}).infra_error is None


def _mini(trajectory: str):
    return PRESETS["mini-swe-agent"].parse("", 1, {"trajectory": trajectory})


def test_mini_reason_carries_the_exception_message():
    """Item 12: the reason is the exception's message, not its class name twice."""
    report = _mini((REAL / "mini-swe-agent-2.4.6-401.traj.json").read_text())
    assert report.infra_error.kind == "auth"
    assert report.infra_error.reason.startswith(
        "AuthenticationError: litellm.AuthenticationError: AuthenticationError: OpenAIException - "
        "Incorrect API key provided")


def test_mini_lost_connection_is_network_not_overloaded():
    """Item 12: litellm wraps a lost connection as InternalServerError; a real 500 stays
    overloaded."""
    real = (REAL / "mini-swe-agent-2.4.6-401.traj.json").read_text()
    lost = real.replace('"AuthenticationError"', '"InternalServerError"').replace(
        "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key "
        "provided: sk-fake.", "litellm.InternalServerError: InternalServerError: OpenAIException "
        "- Connection error.")
    report = _mini(lost)
    assert report.infra_error.kind == "network", report
    assert "Connection error." in report.infra_error.reason
    server = lost.replace("Connection error.", "Error code: 500 - Internal server error")
    assert _mini(server).infra_error.kind == "overloaded"


def test_mini_bounds_its_own_retries():
    env = PRESETS["mini-swe-agent"].env(None)
    assert env["MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"] == "2"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_qwen_turn_limit_is_its_own_outcome_and_retries_are_noted():
    report = parse("qwen-code", "qwen-0.24.4-turn-limit", 53)
    assert report.outcome == {"status": "turn_limit"} and report.model == "qwen3-coder-plus"
    cut = parse("qwen-code", "qwen-0.24.4-cut", 1)
    assert "qwen replayed a stream 2 time(s)" in cut.note
    assert cut.outcome["subtype"] == "error_during_execution" and cut.outcome["is_error"] is True


def test_opencode_reads_its_own_cost_and_steps():
    report = parse("opencode", "opencode-1.18.33-solve-openai", 0)
    assert (report.cost_usd, report.cost_source) == (0.0028, "agent")
    assert report.outcome == {"steps": 2, "finish": "stop"} and report.note == ""


def test_cline_prices_a_model_of_its_list_itself():
    report = parse("cline", "cline-3.0.65-anthropic-solve", 0)
    assert (report.cost_usd, report.cost_source, report.model) == \
        (0.00657, "agent", "claude-sonnet-4-5")
    assert report.outcome == {"finish_reason": "completed", "iterations": 2}
