"""Preset readers on hostile, truncated and tricky output (no processes): they never raise, JSON
is read with limits, and only a tool's own error channel can make a run an infrastructure error."""

from __future__ import annotations

import json
import random

import pytest

from ci_eval import strict_json
from ci_eval.agents.presets import PRESETS
from ci_eval.agents.reading import classify, json_lines, last_json_object

CLAUDE, CODEX, GEMINI = PRESETS["claude-code"], PRESETS["codex"], PRESETS["gemini"]
AIDER, GOOSE, MINI = PRESETS["aider"], PRESETS["goose"], PRESETS["mini-swe-agent"]
HUGE_INT = "1" * 5001
DEEP = "[" * 100_000 + "]" * 100_000


def line(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


# --- strict_json limits ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "needle"), [
    (HUGE_INT, "more than 40 digits"),
    (DEEP, "nested deeper than 200"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested deeper than 200"),
    ('{"a": 1, "a": 2}', "duplicate key"),
    ("[NaN]", "NaN is not JSON"),
    ("[1e999]", "too large for a float"),
    ('{"a": 1} trailing', "Extra data"),
])
def test_loads_limited_refuses(text, needle):
    with pytest.raises(ValueError, match=needle):
        strict_json.loads_limited(text)


def test_loads_limited_size_cap_and_brackets_in_strings():
    with pytest.raises(strict_json.StrictJSONError, match="longer than 10 characters"):
        strict_json.loads_limited('{"a": "long text"}', max_chars=10)
    # Brackets inside strings do not count as nesting.
    assert strict_json.loads_limited(json.dumps({"s": "[" * 5000})) == {"s": "[" * 5000}
    assert strict_json.decode_at('noise {"x": [1]} more', 6) == ({"x": [1]}, 16)


# --- every preset on hostile output: a note, never an exception --------------------------------


HOSTILE_OUTPUTS = [
    "",
    "\x00\xff garbage \ufffd",
    "{" * 50_000,
    DEEP,
    "{\"type\":\"result\",\"usage\":{\"input_tokens\":" + HUGE_INT + "}}",
    line({"type": "result", "usage": DEEP}),
    "{\"type\":\"result\",\"usage\":" + DEEP + "}",
    line({"type": "result", "subtype": ["x"], "is_error": "yes", "num_turns": True,
          "usage": {"input_tokens": -5, "output_tokens": 1.5}, "total_cost_usd": "free",
          "modelUsage": {"m": "x"}, "errors": [{"deep": DEEP[:400]}, None, 7]}),
    line({"type": "turn.completed", "usage": {"input_tokens": HUGE_INT}}),
    line({"type": "assistant", "message": {"id": ["unhashable"], "usage": {
        "input_tokens": 1, "output_tokens": 1}}}),
    line({"type": "turn.failed", "error": ["not", "an", "object"]}),
    line({"type": "complete", "total_tokens": "lots", "cost_usd": -1}),
    line({"type": "error", "error": {"nested": True}}),
    json.dumps({"stats": {"models": {"m": {"tokens": {"prompt": "x", "candidates": None}}}},
                "error": ["weird"]}, indent=2),
    json.dumps({"stats": {"models": ["not a mapping"]}, "error": {"code": [41]}}),
    "Tokens: 99999999999999999999k sent, 1e999 received. Cost: $1.2.3 message, $9.9.9 session.",
    "Tokens: " + "9" * 5000 + " sent, 1 received.",
    "\n".join(["{"] * 300) + '\n{"stats": {}}',
]


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("index", range(len(HOSTILE_OUTPUTS)))
def test_hostile_output_never_raises(name, index):
    output = HOSTILE_OUTPUTS[index]
    report = PRESETS[name].parse(output, 1, {"trajectory": output})
    for count in (report.tokens, report.input_tokens, report.output_tokens,
                  report.cached_input_tokens, report.cache_write_tokens):
        assert count is None or (isinstance(count, int) and count >= 0)
    assert report.cost_usd is None or report.cost_usd >= 0
    assert "output not understood" not in report.note  # handled by the reader, not the net
    json.dumps(report.usage())  # usage is always plain JSON for the record


def test_random_bytes_never_raise():
    rng = random.Random(7)
    alphabet = '{}[]":,0123456789eE.-+ntrufalsTypesubtyp\n\\'
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 400)))
        for preset in PRESETS.values():
            report = preset.parse(text, rng.choice([0, 1, None, 41, 53]), {"trajectory": text})
            assert "output not understood" not in report.note, (preset.name, text)


@pytest.mark.parametrize("preset_name, output, files", [
    ("claude-code", '{"type":"result","usage":{"input_tokens":' + HUGE_INT + '}}', {}),
    ("claude-code", '{"type":"result","usage":' + DEEP + "}", {}),
    ("codex", '{"type":"turn.completed","usage":{"input_tokens":' + HUGE_INT + "}}", {}),
    ("goose", '{"type":"complete","total_tokens":' + DEEP + "}", {}),
    ("gemini", '{"stats": {"models": ' + DEEP + "}}", {}),
    ("mini-swe-agent", "", {"trajectory": '{"info": {"model_stats": {"api_calls": ' + HUGE_INT + "}}}"}),
    ("mini-swe-agent", "", {"trajectory": DEEP}),
])
def test_huge_integers_and_deep_nesting_give_a_note(preset_name, output, files):
    report = PRESETS[preset_name].parse(output, 0, files)
    assert report.tokens is None and report.cost_usd is None
    assert report.notes, report
    assert "output not understood" not in report.note  # the reader handled it, not the safety net


def test_reading_helpers_report_why():
    objects, note = json_lines('{"a": 1}\nplain text\n{"b": ' + HUGE_INT + "}\n{\"c\"")
    assert objects == [{"a": 1}]
    assert note == "2 unreadable JSON line(s), the first: an integer with more than 40 digits"
    assert last_json_object("no json here", lambda o: True) == (None, "no JSON object in the output")
    found, why = last_json_object('{"a": 1}\n{"b": 2}\n', lambda o: "a" in o)
    assert found == {"a": 1} and why == ""
    assert "not readable" in last_json_object('{"a": ' + HUGE_INT + "}", lambda o: True)[1]


# --- classification comes from the tool's error channel only -----------------------------------


@pytest.mark.parametrize(("text", "kind"), [
    ("API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}", "overloaded"),
    ("API Error: Rate limit reached", "rate_limit"),
    ("You've hit your limit · resets 1pm (Europe/Lisbon)", "rate_limit"),
    ("Invalid API key · Please run /login", "auth"),
    ("exceeded retry limit, last status: 401 Unauthorized, request id: x", "auth"),
    ("exceeded retry limit, last status: 429 Too Many Requests", "rate_limit"),
    ("Credit balance is too low", "auth"),
    ("stream disconnected before completion: error sending request for url", "network"),
    ("getaddrinfo ENOTFOUND api.anthropic.com", "network"),
    ("status: 429 RESOURCE_EXHAUSTED", "rate_limit"),
    ("The API provider's servers are down or overloaded.", "overloaded"),
    ("Your input exceeds the context window of this model.", None),
    ("Tool failed: file not found", None),
    ("", None),
])
def test_classify(text, kind):
    found = classify(text)
    assert (found.kind if found else None) == kind


def test_model_text_never_makes_an_infra_error():
    """A model that ends with 'API Error: 429' in its answer is still scored: is_error is false."""
    forged = line({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
                   "result": "API Error: 429 Too Many Requests. Invalid API key.",
                   "total_cost_usd": 0.5, "usage": {"input_tokens": 10, "output_tokens": 5}})
    assert CLAUDE.parse(forged, 0, {}).infra_error is None
    goose = "\n".join([line({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "Rate limit exceeded: 429"}]}}),
        line({"type": "complete", "total_tokens": 10})])
    assert GOOSE.parse(goose, 0, {}).infra_error is None
    assert GEMINI.parse(json.dumps({"response": "Error 429 quota exceeded", "stats": {}}), 0,
                        {}).infra_error is None


def test_claude_error_without_known_signature_is_scored_with_a_note():
    out = line({"type": "result", "subtype": "error_during_execution", "is_error": True,
                "errors": ["Tool permission stream closed"], "num_turns": 4,
                "usage": {"input_tokens": 1, "output_tokens": 2}, "total_cost_usd": 0.01})
    report = CLAUDE.parse(out, 1, {})
    assert report.infra_error is None
    assert "claude reported an error: Tool permission stream closed" in report.note


def test_claude_without_result_sums_each_message_once():
    def assistant(msg_id, fresh, out):
        return line({"type": "assistant", "message": {"id": msg_id, "usage": {
            "input_tokens": fresh, "output_tokens": out, "cache_read_input_tokens": 100}}})
    # The same message id appears once per content block: counted once.
    report = CLAUDE.parse("\n".join([assistant("m1", 10, 5), assistant("m1", 10, 5),
                                     assistant("m2", 20, 7)]), None, {})
    assert (report.input_tokens, report.output_tokens, report.cached_input_tokens) == (230, None, 200)
    assert report.cost_usd is None and "2 assistant message(s)" in report.note


def test_claude_plain_error_line_when_no_json():
    report = CLAUDE.parse("Error: Invalid API key · Please run /login\n", 1, {})
    assert report.infra_error.kind == "auth"


def test_codex_sums_turns_and_reads_the_last_error():
    out = "\n".join([
        line({"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40,
                                                  "output_tokens": 10}}),
        line({"type": "turn.completed", "usage": {"input_tokens": 200, "cached_input_tokens": 0,
                                                  "output_tokens": 20}}),
        line({"type": "error", "message": "stream disconnected before completion"}),
        line({"type": "turn.failed", "error": {"message": "stream disconnected before completion"}}),
    ])
    report = CODEX.parse(out, 1, {})
    assert (report.tokens, report.input_tokens, report.cached_input_tokens) == (330, 300, 40)
    assert report.infra_error.kind == "network"
    assert report.outcome == {"turns_completed": 2, "turns_failed": 1,
                              "error": "stream disconnected before completion"}


def test_gemini_setup_exit_codes():
    doc = json.dumps({"error": {"type": "FatalConfigError", "message": "bad settings", "code": 52}})
    assert GEMINI.parse(doc, 52, {}).infra_error.kind == "setup"
    assert GEMINI.parse("", 42, {}).infra_error.kind == "setup"
    assert GEMINI.parse("", 53, {}).infra_error is None  # the turn limit is the agent's


def test_aider_errors_it_recovered_from_do_not_count():
    out = "\n".join([
        "litellm.RateLimitError: AnthropicException - rate_limit_error",
        "The API provider has rate limited you. Try again later or check your quotas.",
        "Retrying in 0.2 seconds...",
        "Tokens: 1,234 sent, 56 received. Cost: $0.0042 request, $0.0042 session.",
    ])
    report = AIDER.parse(out, 0, {})
    assert report.infra_error is None
    assert (report.input_tokens, report.output_tokens, report.cost_usd) == (1234, 56, 0.0042)
    assert not report.notes  # exact counts (older "1,234" format): nothing rounded


def test_aider_refused_arguments_is_a_setup_error():
    out = "usage: aider [-h] ...\naider: error: unrecognized arguments: --no-fancy-input\n"
    assert AIDER.parse(out, 2, {}).infra_error.kind == "setup"


def test_goose_error_followed_by_more_work_is_not_infra():
    out = "\n".join([
        line({"type": "error", "error": "Server error: 503 Service Unavailable"}),
        line({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Retrying worked."}]}}),
        line({"type": "complete", "total_tokens": 50, "input_tokens": 40, "output_tokens": 10}),
    ])
    report = GOOSE.parse(out, 0, {})
    assert report.infra_error is None and report.tokens == 50


def test_mini_cost_zero_after_calls_is_unknown():
    trajectory = json.dumps({"info": {"exit_status": "Submitted", "model_stats": {
        "instance_cost": 0.0, "api_calls": 4}}, "messages": []})
    report = MINI.parse("", 0, {"trajectory": trajectory})
    assert report.cost_usd is None and report.cost_source is None
    assert "cost 0 after API calls" in report.note


def test_mini_missing_trajectory():
    assert MINI.parse("whatever", 0, {}).notes == ("no trajectory file: usage unknown",)
    assert MINI.parse("litellm.AuthenticationError: bad key", 1, {}).infra_error.kind == "auth"


def test_mini_unknown_exit_status_is_a_note_not_infra():
    trajectory = json.dumps({"info": {"exit_status": "ExecutionTimeoutError", "submission": "x"},
                             "messages": []})
    report = MINI.parse("", 1, {"trajectory": trajectory})
    assert report.infra_error is None and "ended with ExecutionTimeoutError" in report.note


def test_every_preset_documents_its_keys_and_program():
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.program and preset.key_env
        assert all(k.isupper() or k.islower() for k in (*preset.key_env, *preset.pass_env))
        assert preset.__class__.__module__ != "ci_eval.agents.preset"
