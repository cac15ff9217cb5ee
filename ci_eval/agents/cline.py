"""Cline CLI (`cline`, npm `cline`, 3.x), headless: `cline --json [-m MODEL] -- PROMPT`.

A prompt given as an argument runs one task in act mode with every tool auto-approved and exits.
stdout is JSONL: `agent_event` lines ({"event": {"type": "usage" | "content_start" | "notice" |
"error" | "done" | ...}}), `hook_event` lines, and last one `run_result` {finishReason
("completed" | "error" | ...), iterations, usage {inputTokens, outputTokens, cacheReadTokens,
cacheWriteTokens, totalCost}, aggregateUsage (the same, with sub-agents), text, model {id,
provider}}. inputTokens counts every prompt token, cache reads and writes included (checked
against the fake's fixed usage). totalCost is Cline's price for the tokens from its model list,
0 when it does not know the model's price (an OpenAI-compatible endpoint): 0 with tokens is read
as unknown. An API failure is an `error` event {error {message}, errorClass ("auth", ...,
"unknown"), recoverable} and run_result finishReason "error", exit 1.

Provider and model: `model:` is `PROVIDER/MODEL` with Cline's provider ids (`anthropic/...`,
`openai-native/...`, `openai-compatible/...`, `openrouter/...`), or a bare model (`claude...` is
Anthropic's, anything else OpenAI's); no model: Anthropic at Cline's default model. The key comes
from the provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...), which Cline reads when
its settings hold no key. Cline takes no base URL from the environment (it passes its own default
to the SDK): `base_url:` is written into the provider's settings in the run's HOME
(~/.cline/data/settings/providers.json), the URL with /v1 as Cline's settings take it.

Retries: Cline (through its SDK) retries a failing request by itself, bounded (seen against the
fake: 6 requests over about 60 s for a 500, 7 for a cut connection, announced as
`provider error — retrying` notices); no setting bounds it further, the run's timeout does.
"""

from __future__ import annotations

import json
import re

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROXY_ENV,
    AgentReport,
    InfraError,
    Preset,
    count,
    make_infra,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, classify_as, compact, json_lines

SETTINGS_FILE = ".cline/data/settings/providers.json"
DEFAULT_PROVIDER = "anthropic"
# A gateway speaks OpenAI's chat completions: an OpenAI model behind base_url is driven through
# Cline's OpenAI-compatible provider (the one whose base URL its own `cline auth -b` sets).
GATEWAY_PROVIDERS = {"openai-native": "openai-compatible"}
# Cline's error classes that name the infrastructure kind outright.
ERROR_CLASSES = {"auth": "auth", "rate_limit": "rate_limit", "network": "network"}
# The OpenAI API's wording for a 500 and Bun's for a dropped connection, which the shared
# signatures do not cover.
OVERLOADED = re.compile(r"the server had an error", re.IGNORECASE)
# Anthropic's not_found_error message for an unknown model is "model: NAME": Cline passes on
# only that message (no status, errorClass "unknown").
UNKNOWN_MODEL = re.compile(r"^\s*model: \S+\s*$")
CUT = re.compile(r"socket connection was closed unexpectedly|ECONNRESET|FailedToOpenSocket|"
                 r"ConnectionRefused|Cannot connect to API", re.IGNORECASE)


def provider_and_model(model: str | None) -> tuple[str, str | None]:
    """(Cline provider id, model id for it) of a `model:` value."""
    if not model:
        return DEFAULT_PROVIDER, None
    if "/" in model:
        provider, name = model.split("/", 1)
        if provider == "openai":
            provider = "openai-native"
        return provider, name or None
    return ("anthropic" if model.lower().startswith("claude") else "openai-native"), model


class Cline(Preset):
    name = "cline"
    program = "cline"
    install = Install(
        "npm", "cline", "3.0.65", "cline", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        model_note="Cline uses Anthropic at its default model unless told otherwise: set "
        "`model:` in an agents: entry of ci-eval.yaml (preset: cline), e.g. "
        "anthropic/claude-sonnet-4-5 or openai/gpt-5 (with OPENAI_API_KEY)")
    api_hosts = ("api.anthropic.com", "api.openai.com", "openrouter.ai")
    harness_files = ("AGENTS.md", ".clinerules", ".cline")
    key_env = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY")
    pass_env = PROXY_ENV

    def home_files(self, model):
        return {SETTINGS_FILE: _settings(model, None)}

    def gateway_home_files(self, base_url, model):
        return {SETTINGS_FILE: _settings(model, base_url)}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        # The provider is the settings file's lastUsedProvider (home_files): with base_url it
        # differs from the model's own (GATEWAY_PROVIDERS), which argv does not know.
        _provider, name = provider_and_model(model)
        argv = [self.program, "--json", "--auto-approve", "true"]
        if name:
            argv += ["-m", name]
        # Cline's options parser takes everything after "--" as the prompt, also "-x"
        return argv + list(extra_args) + ["--", prompt_text]

    def read(self, output, exit_code, files):
        lines, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        results = [e for e in lines if e.get("type") == "run_result"]
        events = [e.get("event") for e in lines
                  if e.get("type") == "agent_event" and isinstance(e.get("event"), dict)]
        errors = [e for e in events if e.get("type") == "error"]
        retries = [e for e in events if e.get("type") == "notice"
                   and isinstance(e.get("metadata"), dict)
                   and e["metadata"].get("kind") == "provider_error_retry"]
        result = results[-1] if results else None
        outcome: dict = {}
        if result is None:
            notes.append("no run_result line in output" if lines else "no JSON events in output")
        else:
            outcome["finish_reason"] = one_line(result.get("finishReason", ""), 40) or None
            iterations = count(result.get("iterations"))
            if iterations is not None:
                outcome["iterations"] = iterations
        if retries:
            notes.append(f"cline retried {len(retries)} time(s) after provider errors")

        usage = _usage(result)
        inp, out, cached, written, cost = usage
        if result is not None and inp is None:
            notes.append("run_result without usage")
        if cost == 0 and (inp or out):
            cost = None  # Cline prices only the models of its list; 0 is "unknown"
        model = result.get("model") if result else None
        model_id = model.get("id") if isinstance(model, dict) else None

        message = _error_message(errors[-1]) if errors else None
        if message is None and result is not None and result.get("finishReason") == "error":
            message = result.get("text") if isinstance(result.get("text"), str) else "error"
        if message:
            outcome["error"] = one_line(message)
        infra = _infra(errors[-1] if errors else {}, message, retries) if message else None
        if message and infra is None:
            notes.append(f"cline reported an error: {one_line(message)}")
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written,
                           cost_usd=cost, cost_source="agent" if cost is not None else None,
                           model=model_id if isinstance(model_id, str) else None,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))


def _settings(model: str | None, base_url: str | None) -> str:
    provider, name = provider_and_model(model)
    settings: dict = {"provider": provider}
    if base_url:
        provider = GATEWAY_PROVIDERS.get(provider, provider)
        settings = {"provider": provider, "baseUrl": base_url}
    if name:
        settings["model"] = name
    return json.dumps({"version": 1, "lastUsedProvider": provider, "modes": {}, "providers": {
        provider: {"settings": settings, "updatedAt": "2026-01-01T00:00:00.000Z",
                   "tokenSource": "manual"}}}, indent=2) + "\n"


def _usage(result) -> tuple:
    """(input, output, cache read, cache write, cost) of run_result, aggregateUsage first."""
    if not isinstance(result, dict):
        return None, None, None, None, None
    usage = result.get("aggregateUsage")
    if not isinstance(usage, dict):
        usage = result.get("usage")
    if not isinstance(usage, dict):
        return None, None, None, None, None
    inp, out = count(usage.get("inputTokens")), count(usage.get("outputTokens"))
    if inp is None or out is None:
        return None, None, None, None, None
    return (inp, out, count(usage.get("cacheReadTokens")), count(usage.get("cacheWriteTokens")),
            money(usage.get("totalCost")))


def _error_message(event: dict) -> str | None:
    error = event.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) else compact(error)
    return error if isinstance(error, str) else None


def _infra(event: dict, message: str, retries: list) -> InfraError | None:
    error_class = event.get("errorClass")
    kind = ERROR_CLASSES.get(error_class) if isinstance(error_class, str) else None
    if kind:
        return classify_as(kind, message) or make_infra(kind, f"cline ({kind}): {message}")
    found = classify(message)
    if found:
        return found
    if UNKNOWN_MODEL.match(message):
        return make_infra("setup", f"model not found (Anthropic's not_found_error): {message}")
    if OVERLOADED.search(message):
        return make_infra("overloaded", f"provider overloaded: {message}")
    if CUT.search(message):
        return make_infra("network", f"connection cut: {message}")
    last = retries[-1]["metadata"].get("providerError") if retries else None
    return classify(last) if isinstance(last, str) else None


PRESET = Cline()
