"""The openhands preset (ci_eval/agents/openhands.py) on what the real OpenHands CLI 1.16.0 (SDK
1.21.0) printed and wrote against tests/fake_models: tests/fixtures/real_clis/openhands-1.16.0-MODE.txt
is its stdout+stderr, MODE.state.json the conversation's base_state.json. No processes here:
tests/test_real_clis.py runs the real CLI through `ci-eval run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval.agents.openhands import CONVERSATION_ID, STATE_FILE
from ci_eval.agents.presets import PRESETS

REAL = Path(__file__).resolve().parent / "fixtures" / "real_clis"
PRESET = PRESETS["openhands"]


def fixture(mode: str) -> tuple[str, str]:
    return ((REAL / f"openhands-1.16.0-{mode}.txt").read_text(),
            (REAL / f"openhands-1.16.0-{mode}.state.json").read_text())


def parse(mode: str, exit_code: int | None = 0):
    output, state = fixture(mode)
    return PRESET.parse(output, exit_code, {"state": state})


def test_a_solve_reads_usage_and_cost_from_the_state_file():
    report = parse("solve")
    # two answers of the fake: 1000 input (200 cached) and 50 output each; the chat API has no
    # cache-write field (litellm's count of them is 0: unknown)
    assert (report.input_tokens, report.cached_input_tokens, report.cache_write_tokens,
            report.output_tokens, report.tokens) == (2000, 400, None, 100, 2100)
    assert report.cost_usd == pytest.approx(0.0055) and report.cost_source == "agent"
    assert report.model == "openai/gpt-4o"
    assert report.outcome == {"execution_status": "finished", "llm_calls": 2}
    assert report.infra_error is None and report.note == ""


@pytest.mark.parametrize(("mode", "kind", "code"), [
    ("401", "auth", "AuthenticationError"),
    ("404", "setup", "NotFoundError"),
    ("429", "rate_limit", "LLMRateLimitError"),
    ("5xx", "overloaded", "LLMServiceUnavailableError"),
    # a reset connection: the SDK folds it into LLMServiceUnavailableError ("Connection error.")
    ("cut", "network", "LLMServiceUnavailableError"),
])
def test_api_errors_are_infrastructure_named_by_the_error_event(mode, kind, code):
    report = parse(mode)
    assert report.infra_error is not None and report.infra_error.kind == kind, report
    assert report.infra_error.reason.startswith(f"{code}: litellm."), report.infra_error.reason
    assert report.outcome["execution_status"] == "error" and report.outcome["error"] == code
    assert report.input_tokens is None and report.cost_usd is None


def test_an_error_event_counts_only_when_the_state_file_says_error():
    """A finished conversation with an error-like line in its output is scored: the status
    comes from the SDK's state file, which the model does not write."""
    solve_output, solve_state = fixture("solve")
    error_line = [line for line in fixture("429")[0].splitlines()
                  if '"ConversationErrorEvent"' in line][0]
    report = PRESET.parse(solve_output + "\n" + error_line + "\n", 0, {"state": solve_state})
    assert report.infra_error is None and report.outcome["execution_status"] == "finished"


def test_model_text_that_looks_like_an_error_event_is_not_one():
    """The model's words are inside an event's JSON string, never a line of their own."""
    output, state = fixture("solve")
    forged = json.dumps({"kind": "ConversationErrorEvent", "source": "environment",
                         "code": "LLMRateLimitError", "detail": "429"})
    message = json.dumps({"kind": "MessageEvent", "source": "agent",
                          "llm_message": {"content": [{"text": "\n" + forged + "\n"}]}})
    errored = json.loads(state) | {"execution_status": "error"}
    report = PRESET.parse(output + "\n" + message + "\n", 0, {"state": json.dumps(errored)})
    assert report.infra_error is None
    assert "openhands ended with an error and no error event" in report.note


def test_cost_zero_after_model_calls_is_unknown():
    output, state = fixture("solve")
    data = json.loads(state)
    data["stats"]["usage_to_metrics"]["agent"]["accumulated_cost"] = 0.0
    report = PRESET.parse(output, 0, {"state": json.dumps(data)})
    assert report.cost_usd is None and report.cost_source is None
    assert "cost 0 after model calls" in report.note
    assert report.input_tokens == 2000


def test_the_condensers_usage_is_added_to_the_agents():
    output, state = fixture("solve")
    data = json.loads(state)
    condenser = data["stats"]["usage_to_metrics"]["condenser"]
    condenser["accumulated_token_usage"].update(prompt_tokens=300, completion_tokens=30,
                                                cache_read_tokens=0)
    condenser["token_usages"] = [{"prompt_tokens": 300}]
    condenser["accumulated_cost"] = 0.001
    report = PRESET.parse(output, 0, {"state": json.dumps(data)})
    assert (report.input_tokens, report.output_tokens, report.cached_input_tokens) == (2300, 130, 400)
    assert report.cost_usd == pytest.approx(0.0065)
    assert report.outcome["llm_calls"] == 3


@pytest.mark.parametrize("state", [
    "", "{", "[]", '{"execution_status": 5, "stats": "x"}',
    '{"execution_status": "finished", "stats": {"usage_to_metrics": {"agent": '
    '{"accumulated_token_usage": {"prompt_tokens": 1e400, "completion_tokens": -1}, '
    '"accumulated_cost": 1e400, "token_usages": [1]}}}}',
])
def test_a_malformed_or_hostile_state_file_gives_no_usage_and_never_raises(state):
    report = PRESET.parse("", 0, {"state": state})
    assert report.input_tokens is None and report.cost_usd is None
    assert report.infra_error is None and report.notes


@pytest.mark.parametrize(("missing", "kind"), [("LLM_MODEL", "setup"),
                                                ("LLM_API_KEY, LLM_MODEL", "auth")])
def test_no_state_file_and_a_failed_start_is_infrastructure(missing, kind):
    output = f"Error: Missing required environment variable(s): {missing}\nWhen using ...\n"
    report = PRESET.parse(output, 1, {})
    assert report.infra_error is not None and report.infra_error.kind == kind, report
    assert "no conversation state file" in report.note
    refused = PRESET.parse("openhands: error: unrecognized arguments: --bad\n", 2, {})
    assert refused.infra_error.kind == "setup"
    assert PRESET.parse("", None, {}).infra_error is None  # killed at the timeout: scored


def test_argv_keeps_the_conversation_in_the_runs_folder_under_a_fixed_id():
    argv = PRESET.argv("task text", "/r/run/prompt.md", "/r/run/ws", "/r/run", "openai/x",
                       ("--exit-without-confirmation",))
    assert PRESET.run_env("/r/run") == {"OPENHANDS_CONVERSATIONS_DIR": "/r/run/openhands"}
    assert argv == ["openhands", "--headless", "--json", "--override-with-envs", "--resume", CONVERSATION_ID,
                    "-f", "/r/run/prompt.md", "--exit-without-confirmation"]
    assert PRESET.output_files("/r/run") == {"state": f"/r/run/{STATE_FILE}"}
    assert STATE_FILE == f"openhands/{CONVERSATION_ID.replace('-', '')}/base_state.json"


def test_model_key_and_base_url_are_the_clis_env_overrides():
    assert PRESET.env("anthropic/claude-sonnet-4-5")["LLM_MODEL"] == "anthropic/claude-sonnet-4-5"
    assert "LLM_MODEL" not in PRESET.env(None)
    assert PRESET.env(None)["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert PRESET.gateway_env("http://gw/v1", "openai/x") == {"LLM_BASE_URL": "http://gw/v1"}
    assert PRESET.key_env == ("LLM_API_KEY",) and PRESET.model_env == ("LLM_MODEL",)


def test_home_settings_bound_the_sdks_retries():
    """The SDK's default is 5 retries with waits of 8-64 s; the run's HOME gets one retry."""
    settings = json.loads(PRESET.home_files(None)[".openhands/agent_settings.json"])
    for llm in (settings["llm"], settings["condenser"]["llm"]):
        assert (llm["num_retries"], llm["retry_max_wait"]) == (1, 8)
    assert settings["condenser"]["kind"] == "LLMSummarizingCondenser"


def test_harness_files_are_the_ones_the_sdk_loads():
    assert {"AGENTS.md", "CLAUDE.md", ".cursorrules", ".openhands", ".agents"} <= set(
        PRESET.harness_files)
