"""OpenAI Codex CLI (`codex`), headless: `codex exec --json`.

stdout is JSONL (codex-rs/exec/src/exec_events.rs): thread.started, turn.started,
item.started/updated/completed, turn.completed {usage: {input_tokens, cached_input_tokens,
output_tokens}}, turn.failed {error: {message}}, error {message}. input_tokens includes the
cached ones (codex's own TokenUsage::non_cached_input subtracts them). No cost field: cost comes
from the pricing table, or stays unknown.

Unattended: --dangerously-bypass-approvals-and-sandbox (ci-eval sandboxes the agent itself, and
codex's own sandbox does not nest inside it), --skip-git-repo-check (the workspace need not be a
git repository). The prompt follows "--" so that one starting with "-" is not an option.
"""

from __future__ import annotations

from ci_eval.agents.preset import PROXY_ENV, AgentReport, Preset, add, count, one_line, total
from ci_eval.agents.reading import classify_first, compact, json_lines


class Codex(Preset):
    name = "codex"
    program = "codex"
    key_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    login_file = (".codex", "auth.json")
    login_folder_env = "CODEX_HOME"
    pass_env = ("OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_HOME",
                *PROXY_ENV)

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
        errors = [e for e in events if e.get("type") == "error"]

        usages = [u for u in (_usage(e.get("usage")) for e in completed) if u is not None]
        if len(usages) < len(completed):
            notes.append(f"{len(completed) - len(usages)} turn.completed event(s) without usage")
        inp = add(*(u[0] for u in usages))
        cached = add(*(u[1] for u in usages))
        out = add(*(u[2] for u in usages))
        if not events:
            notes.append("no JSON events in output")
        elif not completed:
            notes.append("no turn.completed event: usage unknown")
        elif failed:
            notes.append("a failed turn's usage is not reported")

        messages = [_message(e.get("error")) for e in failed] + [_message(e) for e in errors]
        messages = [m for m in messages if m]
        infra = classify_first(reversed(messages)) if messages else None
        if messages and infra is None:
            notes.append(f"codex reported an error: {one_line(messages[-1])}")
        outcome = {"turns_completed": len(completed), "turns_failed": len(failed)}
        if messages:
            outcome["error"] = one_line(messages[-1])
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, outcome=outcome, infra_error=infra,
                           notes=tuple(notes))


def _usage(value) -> tuple[int, int | None, int] | None:
    if not isinstance(value, dict):
        return None
    inp, out = count(value.get("input_tokens")), count(value.get("output_tokens"))
    if inp is None or out is None:
        return None
    return inp, count(value.get("cached_input_tokens")), out


def _message(value) -> str | None:
    if isinstance(value, dict):
        message = value.get("message")
        return message if isinstance(message, str) else compact(value)
    return value if isinstance(value, str) else None


PRESET = Codex()
