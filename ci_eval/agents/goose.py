"""goose (`goose`), headless: `goose run --instructions PROMPT --no-session --output-format stream-json`.

stdout is JSONL: {"type":"message","message":{id, role, content:[...]}} chunks (several per
message id), {"type":"error","error":"..."}, and a final {"type":"complete", "total_tokens":N}
which carries input_tokens/output_tokens since goose 1.37 and cache_read_input_tokens,
cache_write_input_tokens and cost_usd in later versions (block/goose#8870, #10430, as read by
Harbor's goose adapter). goose's input_tokens already include cache reads and writes.

The model is chosen through the environment: `model: anthropic/claude-sonnet-4-5` sets
GOOSE_PROVIDER=anthropic and GOOSE_MODEL=claude-sonnet-4-5 (the first "/" splits them); a model
without "/" sets GOOSE_MODEL only and GOOSE_PROVIDER comes from the environment or goose's
config. Unattended: GOOSE_MODE=auto; GOOSE_DISABLE_KEYRING so keys come from the environment.
"""

from __future__ import annotations

from types import MappingProxyType

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    PROVIDER_KEYS,
    PROXY_ENV,
    AgentReport,
    Preset,
    count,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, compact, json_lines

MAX_TURNS_TEXT = "reached the maximum number of actions"


class Goose(Preset):
    name = "goose"
    program = "goose"
    install = Install(
        None, program="goose", secrets=("ANTHROPIC_API_KEY",),
        model_note="goose has no npm or PyPI package: add a step before the run step that "
        "installs the `goose` binary, and set GOOSE_PROVIDER / GOOSE_MODEL",
        needs_model=True,
        refused="goose has no npm or PyPI package a workflow could install at a pinned "
        "version: init would write a workflow that cannot run. Set it up by hand: an "
        "agents: entry in ci-eval.yaml (preset: goose, model: PROVIDER/MODEL) and a step in "
        "eval.yml that installs the goose binary (docs/agents.md)")
    api_hosts = ("api.anthropic.com", "api.openai.com")
    harness_files = (".goosehints",)
    key_env = PROVIDER_KEYS + ("DATABRICKS_TOKEN", "OLLAMA_HOST")
    model_env = ("GOOSE_MODEL",)
    pass_env = ("GOOSE_PROVIDER", "GOOSE_MODEL", "GOOSE_MAX_TURNS", "GOOSE_CONTEXT_LIMIT",
                "OPENAI_HOST", "ANTHROPIC_HOST", "GOOGLE_HOST", "OPENROUTER_HOST",
                "DATABRICKS_HOST", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                *PROXY_ENV)
    fixed_env = MappingProxyType({"GOOSE_MODE": "auto", "GOOSE_DISABLE_KEYRING": "true"})

    def env(self, model):
        env = dict(self.fixed_env)
        if model:
            provider, _, name = model.partition("/")
            if name:
                env.update(GOOSE_PROVIDER=provider, GOOSE_MODEL=name)
            else:
                env["GOOSE_MODEL"] = model
        return env

    def gateway_env(self, base_url, model):
        """goose's provider host variables (unverified against the real tool)."""
        provider = (model or "").partition("/")[0] if "/" in (model or "") else ""
        hosts = {"anthropic": "ANTHROPIC_HOST", "openai": "OPENAI_HOST", "google": "GOOGLE_HOST",
                 "openrouter": "OPENROUTER_HOST", "databricks": "DATABRICKS_HOST"}
        names = [hosts[provider]] if provider in hosts else ["OPENAI_HOST", "ANTHROPIC_HOST"]
        return {name: base_url for name in names}

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        return [self.program, "run", "--instructions", prompt_file, "--no-session",
                "--output-format", "stream-json", *extra_args]

    def read(self, output, exit_code, files):
        events, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        complete = next((e for e in reversed(events) if e.get("type") == "complete"), None)
        last_message = max((i for i, e in enumerate(events) if e.get("type") == "message"), default=-1)
        errors = [_error_text(e) for e in events[last_message + 1:] if e.get("type") == "error"]
        errors = [e for e in errors if e]
        max_turns = any(MAX_TURNS_TEXT in _text(e) for e in events if e.get("type") == "message")

        inp = out = reported = cached = written = cost = None
        if complete is None:
            notes.append("no complete event in output: usage unknown")
        else:
            inp, out = count(complete.get("input_tokens")), count(complete.get("output_tokens"))
            reported = count(complete.get("total_tokens"))
            cached = count(complete.get("cache_read_input_tokens"))
            written = count(complete.get("cache_write_input_tokens"))
            cost = money(complete.get("cost_usd"))
            if reported is None and inp is None:
                notes.append("complete event without token counts")
            elif inp is None:
                notes.append("goose reported a total only (no input/output split)")
        infra = classify(errors[-1]) if errors else None
        if errors and infra is None:
            notes.append(f"goose reported an error: {one_line(errors[-1])}")
        outcome = {"completed": complete is not None, "max_turns": max_turns}
        if errors:
            outcome["error"] = one_line(errors[-1])
        return AgentReport(tokens=total(inp, out, reported), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written, cost_usd=cost,
                           cost_source="agent" if cost is not None else None, outcome=outcome,
                           infra_error=infra, notes=tuple(notes))


def _error_text(event: dict) -> str | None:
    value = event.get("error", event.get("message"))
    return compact(value) if value is not None else None


def _text(event: dict) -> str:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return ""
    return " ".join(part.get("text", "") for part in content[:100]
                    if isinstance(part, dict) and isinstance(part.get("text"), str))


PRESET = Goose()
