"""OpenAI Codex CLI (`codex`), headless: `codex exec --json`.

stdout is JSONL (codex-rs/exec/src/exec_events.rs): thread.started, turn.started,
item.started/updated/completed, turn.completed {usage: {input_tokens, cached_input_tokens,
cache_write_input_tokens, output_tokens, reasoning_output_tokens}}, turn.failed {error:
{message}}, error {message}. input_tokens includes the cached ones and the cache writes (codex's
own TokenUsage::non_cached_input subtracts them); output_tokens includes the reasoning ones. No
cost field: cost comes from the pricing table, or stays unknown.

codex prints `{"type":"error","message":"Reconnecting... 2/5 (...)"}` on every retry it makes,
also when the turn then completes: only errors after the last turn.completed count, and a
reconnect notice only when nothing else says why the turn failed.

A gateway is set with `-c openai_base_url="URL"` (codex 0.171 ignores OPENAI_BASE_URL).

Unattended: --dangerously-bypass-approvals-and-sandbox (ci-eval sandboxes the agent itself, and
codex's own sandbox does not nest inside it), --skip-git-repo-check (the workspace need not be a
git repository). The prompt follows "--" so that one starting with "-" is not an option.
"""

from __future__ import annotations

import re

from ci_eval.agents.installs import Install
from ci_eval.agents.preset import PROXY_ENV, AgentReport, Preset, add, count, one_line, total
from ci_eval.agents.reading import classify_first, compact, json_lines

RECONNECTING = re.compile(r"^\s*Reconnecting\.\.\.\s*\d+/\d+")


class Codex(Preset):
    name = "codex"
    program = "codex"
    install = Install(
        "npm", "@openai/codex", "0.171.0", "codex", ("OPENAI_API_KEY",),
        login="a ChatGPT login instead of an API key: `codex login` writes "
        "~/.codex/auth.json, which a hosted runner does not have; on a self-hosted runner "
        "log in once as the runner's user (or set CODEX_HOME to a folder that holds it)")
    api_hosts = ("api.openai.com", "chatgpt.com")
    harness_files = ("AGENTS.md", "AGENTS.override.md", ".codex")
    key_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    login_file = (".codex", "auth.json")
    login_folder_env = "CODEX_HOME"
    pass_env = ("OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_HOME",
                *PROXY_ENV)

    def gateway_args(self, base_url):
        # A TOML string; config.base_url_value refuses quotes, backslashes and spaces in it.
        return ["-c", f'openai_base_url="{base_url}"']

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "exec", "--json", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox"]
        if model:
            argv += ["--model", model]
        return argv + list(extra_args) + ["--", prompt_text]

    def read(self, output, exit_code, files):
        events, unreadable = json_lines(output)
        notes = [unreadable] if unreadable else []
        completed = [e for e in events if e.get("type") == "turn.completed"]
        failed = [e for e in events if e.get("type") == "turn.failed"]

        usages = [u for u in (_usage(e.get("usage")) for e in completed) if u is not None]
        if len(usages) < len(completed):
            notes.append(f"{len(completed) - len(usages)} turn.completed event(s) without usage")
        inp, cached, written, out = (add(*(u[i] for u in usages)) for i in range(4))
        if not events:
            notes.append("no JSON events in output")
        elif not completed:
            notes.append("no turn.completed event: usage unknown")
        elif failed:
            notes.append("a failed turn's usage is not reported")

        last_completed = max((i for i, e in enumerate(events) if e.get("type") == "turn.completed"),
                             default=-1)
        after = events[last_completed + 1:]
        reported = [_message(e.get("error")) if e.get("type") == "turn.failed" else _message(e)
                    for e in after if e.get("type") in ("turn.failed", "error")]
        reported = [m for m in reported if m]
        messages = [m for m in reported if not RECONNECTING.match(m)] or reported
        retried = sum(1 for e in events[:last_completed + 1] if e.get("type") == "error"
                      and RECONNECTING.match(_message(e) or ""))
        if retried:
            notes.append(f"codex retried {retried} time(s) and completed")
        infra = classify_first(reversed(messages)) if messages else None
        if messages and infra is None:
            notes.append(f"codex reported an error: {one_line(messages[-1])}")
        outcome = {"turns_completed": len(completed), "turns_failed": len(failed)}
        if messages:
            outcome["error"] = one_line(messages[-1])
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written,
                           outcome=outcome, infra_error=infra, notes=tuple(notes))


def _usage(value) -> tuple[int, int | None, int | None, int] | None:
    """(input, cached, cache write, output) of a turn.completed usage object."""
    if not isinstance(value, dict):
        return None
    inp, out = count(value.get("input_tokens")), count(value.get("output_tokens"))
    if inp is None or out is None:
        return None
    return (inp, count(value.get("cached_input_tokens")),
            count(value.get("cache_write_input_tokens")), out)


def _message(value) -> str | None:
    if isinstance(value, dict):
        message = value.get("message")
        return message if isinstance(message, str) else compact(value)
    return value if isinstance(value, str) else None


PRESET = Codex()
