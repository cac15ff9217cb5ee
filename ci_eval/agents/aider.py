"""Aider (`aider`), scripted: `aider --message-file PROMPT --yes-always --no-auto-commits ...`.

Aider prints usage only as text, one line per message sent to the model (base_coder.py):

    Tokens: 2.3k sent, 1.2k cache write, 5.1k cache hit, 380 received. Cost: $0.01 message, $0.04 session.

The cache parts are optional, the Cost part is missing for models without known prices, and it
moves to the next line when both cache parts are present. Numbers below 1000 are exact, then
"2.3k" (below 10k) or "15k": token counts from aider are rounded (noted on the run). Older aider
wrote "1,234" and "request" instead of "message"; both are read. Tokens are summed over the
lines; the cost is the last "session" figure (aider's own running total).

The model's answer is printed to the same stdout, so a model could print a forged usage line;
aider offers no separate channel. API errors are aider's/litellm's own lines (litellm.*Error,
"The API provider ..."), and only those after the last usage line count: an error that aider
retried and got past is not an infrastructure failure.

History files go to run_dir (aider's defaults are in the repository root), --no-gitignore stops
it adding .aider* to .gitignore, and commits are the harness's business, not aider's.
"""

from __future__ import annotations

import re

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    LITELLM_OFFLINE,
    PROVIDER_KEYS,
    PROXY_ENV,
    AgentReport,
    InfraError,
    Preset,
    add,
    litellm_base_url_env,
    make_infra,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, classify_as
from ci_eval.strict_yaml import parse_yaml

_NUMBER = r"[\d][\d.,]*k?"
TOKENS_LINE = re.compile(
    rf"^Tokens: (?P<sent>{_NUMBER}) sent(?:, (?P<write>{_NUMBER}) cache write)?"
    rf"(?:, (?P<hit>{_NUMBER}) cache hit)?, (?P<received>{_NUMBER}) received\.(?P<rest>.*)$")
COST_PART = re.compile(r"Cost: \$(?P<message>[\d.]+) (?:message|request), \$(?P<session>[\d.]+) session\.")
ERROR_LINE = re.compile(
    r"^(?:litellm\.\w+(?:Error|Exception|Timeout)\b|\w+Error: |The API provider|"
    r"Missing these environment variables|aider: error:|Model \S+: Missing)")
MODEL_LINE = re.compile(r"^(?:Main model|Model): (\S+)")
REFLECTIONS = re.compile(r"^Only \d+ reflections allowed, stopping\.")


class Aider(Preset):
    name = "aider"
    program = "aider"
    install = Install(
        "pip", "aider-chat", "0.86.2", "aider", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        model_note="aider picks its model from the key it finds; name one with "
        "`model:` in an agents: entry of ci-eval.yaml (preset: aider)")
    api_hosts = ("api.anthropic.com", "api.openai.com")
    harness_files = (".aider.conf.yml", ".aiderignore")
    key_env = PROVIDER_KEYS + ("OLLAMA_API_BASE",)
    pass_env = ("OPENAI_API_BASE", "ANTHROPIC_API_BASE", "AZURE_API_BASE", "AZURE_API_VERSION",
                "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", *PROXY_ENV)
    fixed_env = LITELLM_OFFLINE


    def gateway_env(self, base_url, model):
        return litellm_base_url_env(base_url, model)

    def harness_defaults(self, extra_args, read_text):
        """.aider.conf.yml, .aiderignore, and the files the config's `read:` names (aider
        adds them to the chat read-only: conventions files)."""
        text = read_text(".aider.conf.yml")
        config = parse_yaml(text, ".aider.conf.yml") if text else None
        read = config.get("read") if isinstance(config, dict) else None
        named = [read] if isinstance(read, str) else read if isinstance(read, list) else []
        return self.harness_files + tuple(n for n in named if isinstance(n, str))

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "--message-file", prompt_file, "--yes-always",
                "--no-auto-commits", "--no-dirty-commits", "--no-gitignore",
                "--no-pretty", "--no-stream", "--no-fancy-input", "--no-check-update",
                "--no-show-release-notes", "--analytics-disable", "--no-show-model-warnings",
                "--chat-history-file", f"{run_dir}/aider.chat.history.md",
                "--input-history-file", f"{run_dir}/aider.input.history"]
        if model:
            argv += ["--model", model]
        return argv + list(extra_args)

    def read(self, output, exit_code, files):
        lines = output.splitlines()
        sent = written = hit = received = None
        cost = None
        rounded = False
        messages = 0
        last_usage_line = -1
        model = None
        reflections = False
        for index, line in enumerate(lines):
            line = line.strip()
            if model is None and (found := MODEL_LINE.match(line)):
                model = found.group(1)
            if REFLECTIONS.match(line):
                reflections = True
            match = TOKENS_LINE.match(line)
            if not match:
                continue
            parts = [_tokens(match.group(g)) for g in ("sent", "write", "hit", "received")]
            if parts[0] is None or parts[3] is None:
                continue
            messages += 1
            last_usage_line = index
            rounded = rounded or any("k" in (match.group(g) or "") for g in ("sent", "write", "hit", "received"))
            sent, written, hit, received = (add(a, b) for a, b in zip((sent, written, hit, received), parts))
            following = lines[index + 1].strip() if index + 1 < len(lines) else ""
            price = COST_PART.search(match.group("rest")) or (
                COST_PART.match(following) if following.startswith("Cost:") else None)
            if price:
                cost = _dollars(price.group("session"))

        errors = [line.strip() for line in lines[last_usage_line + 1:] if ERROR_LINE.match(line.strip())]
        infra = self._infra(errors, exit_code)
        notes = []
        if messages == 0:
            notes.append("no 'Tokens:' usage line in output")
        elif rounded:
            notes.append("aider rounds token counts above 1000 (e.g. 2.3k)")
        if errors and infra is None:
            notes.append(f"aider reported an error: {one_line(errors[-1])}")
        outcome = {"messages": messages, "reflections_exhausted": reflections}
        if errors:
            outcome["error"] = one_line(errors[-1])
        # With a prompt cache (Anthropic), aider's "sent" is litellm's prompt_tokens, which
        # already count cache reads and writes, plus the cache writes once more.
        inp = sent - written if sent is not None and written else sent
        return AgentReport(tokens=total(inp, received), input_tokens=inp,
                           output_tokens=received, cached_input_tokens=hit,
                           cache_write_tokens=written, cost_usd=cost,
                           cost_source="agent" if cost is not None else None, model=model,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))

    @staticmethod
    def _infra(errors: list[str], exit_code: int | None) -> InfraError | None:
        if not errors:
            return None
        if exit_code == 2 and any(e.startswith("aider: error:") for e in errors):
            return make_infra("setup", f"aider refused its arguments: {one_line(errors[-1])}")
        text = "\n".join(reversed(errors))
        found = classify(text)
        if found and found.kind == "overloaded" and (lost := classify_as("network", text)):
            return lost  # litellm wraps a reset connection as InternalServerError
        return found


def _tokens(text: str | None) -> int | None:
    if text is None or len(text) > 15:
        return None
    text = text.replace(",", "")
    try:
        if text.endswith("k"):
            return round(float(text[:-1]) * 1000)
        return int(float(text))
    except ValueError:
        return None



def _dollars(text: str) -> float | None:
    try:
        return money(float(text)) if len(text) <= 20 else None
    except ValueError:
        return None


PRESET = Aider()
