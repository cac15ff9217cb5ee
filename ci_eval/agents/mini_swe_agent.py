"""mini-swe-agent (`mini-swe-agent`, also installed as `mini`), headless:
`mini-swe-agent --yolo --exit-immediately --task=... --output RUN_DIR/mini-swe-agent.traj.json`.

Everything is read from the trajectory file it writes (docs/usage/output_files.md), not from
stdout, which interleaves the model's text with command output:

    {"info": {"exit_status": "Submitted"|"LimitsExceeded"|<exception name>, "submission": "...",
              "model_stats": {"instance_cost": 0.05, "api_calls": 12},
              "config": {"model": {"model_name": "..."}}, "mini_version": "..."},
     "messages": [...], "trajectory_format": "mini-swe-agent-1.1"}

Tokens are summed over the messages' litellm usage (extra.response.usage, or the message itself
for Responses-API models). exit_status is the exception's class name when the run died on one
(AuthenticationError, RateLimitError, ...): those name the infrastructure kind.

The reason of such an ending carries the exception's message (the last message's
extra.exception_str); an InternalServerError whose message is a lost connection is "network".

MSWEA_CONFIGURED skips the first-run setup; MSWEA_COST_TRACKING=ignore_errors keeps a model
without a litellm price from aborting the run, which makes mini report a cost of 0: a 0 cost
after API calls is read as unknown, never as free.
"""

from __future__ import annotations

from itertools import pairwise
from types import MappingProxyType

from ci_eval import strict_json
from ci_eval.agents.installs import Install
from ci_eval.agents.preset import (
    LITELLM_OFFLINE,
    PROVIDER_KEYS,
    PROXY_ENV,
    AgentReport,
    Preset,
    add,
    count,
    litellm_base_url_env,
    make_infra,
    money,
    one_line,
    total,
)
from ci_eval.agents.reading import classify, classify_as

TRAJECTORY = "mini-swe-agent.traj.json"
API_ERRORS = {
    "AuthenticationError": "auth", "PermissionDeniedError": "auth",
    "RateLimitError": "rate_limit", "BudgetExceededError": "rate_limit",
    "ServiceUnavailableError": "overloaded", "InternalServerError": "overloaded",
    "APIConnectionError": "network", "APITimeoutError": "network", "Timeout": "network",
    "NotFoundError": "setup",  # the model name is wrong: no retry mends it
}
AGENT_ENDINGS = ("Submitted", "LimitsExceeded")
MODEL_ATTEMPTS = 2


class MiniSweAgent(Preset):
    name = "mini-swe-agent"
    program = "mini-swe-agent"
    install = Install(
        "pip", "mini-swe-agent", "2.4.6", "mini-swe-agent", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        model_note="mini-swe-agent needs a model: set `model:` in an agents: entry of "
        "ci-eval.yaml (preset: mini-swe-agent), e.g. anthropic/claude-sonnet-4-5",
        needs_model=True)
    api_hosts = ("api.anthropic.com", "api.openai.com")
    key_env = ("MSWEA_API_KEY",) + PROVIDER_KEYS
    model_env = ("MSWEA_MODEL_NAME",)
    pass_env = ("MSWEA_MODEL_NAME", "OPENAI_API_BASE", "ANTHROPIC_API_BASE",
                "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", *PROXY_ENV)
    # mini retries a failed model call 10 times by default (waits of 4 to 60 s), under
    # ci-eval's own retries: one retry of its own is enough.
    fixed_env = MappingProxyType({"MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors",
                                  "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": str(MODEL_ATTEMPTS),
                                  **LITELLM_OFFLINE})


    def harness_defaults(self, extra_args, read_text):
        """The config file the entry's args name (`-c FILE`, `--config FILE`): a repo path."""
        named = [value for flag, value in pairwise(extra_args) if flag in ("-c", "--config")]
        named += [a.split("=", 1)[1] for a in extra_args if a.startswith("--config=")]
        return tuple(n for n in named if n.endswith((".yaml", ".yml")) and "/" != n[:1])

    def gateway_env(self, base_url, model):
        return litellm_base_url_env(base_url, model)

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        argv = [self.program, "--yolo", "--exit-immediately", f"--task={prompt_text}",
                "--output", f"{run_dir}/{TRAJECTORY}"]
        if model:
            argv += ["--model", model]
        return argv + list(extra_args)

    def output_files(self, run_dir):
        return {"trajectory": f"{run_dir}/{TRAJECTORY}"}

    def read(self, output, exit_code, files):
        text = files.get("trajectory")
        if text is None:
            infra = None
            if exit_code not in (0, None):
                infra = classify("\n".join(output.splitlines()[-5:]))
            return AgentReport(infra_error=infra, notes=("no trajectory file: usage unknown",))
        try:
            data = strict_json.loads_limited(text)
        except ValueError as exc:
            return AgentReport(notes=(f"trajectory file not readable ({one_line(exc, 120)})",))
        info = data.get("info") if isinstance(data, dict) else None
        if not isinstance(info, dict):
            return AgentReport(notes=("trajectory file has no info object",))

        notes = []
        stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
        calls = count(stats.get("api_calls"))
        cost = money(stats.get("instance_cost"))
        if cost == 0 and calls:
            cost = None
            notes.append("mini-swe-agent reported cost 0 after API calls (model price unknown)")
        inp, out, cached, written = _tokens(data.get("messages"))
        if inp is None:
            notes.append("no token usage in the trajectory messages")
        status = info.get("exit_status") if isinstance(info.get("exit_status"), str) else None
        submission = info.get("submission") if isinstance(info.get("submission"), str) else ""
        infra = None
        if status in API_ERRORS:
            detail = _exception_text(data.get("messages")) or submission or status
            kind = API_ERRORS[status]
            if kind == "overloaded" and classify_as("network", detail):
                kind = "network"  # litellm wraps a lost connection as InternalServerError
            infra = make_infra(kind, f"{status}: {one_line(detail)}")
        elif status not in AGENT_ENDINGS:
            notes.append(f"mini-swe-agent ended with {one_line(status, 80) if status else 'no exit status'}")
        config = info.get("config") if isinstance(info.get("config"), dict) else {}
        model_config = config.get("model") if isinstance(config.get("model"), dict) else {}
        model = model_config.get("model_name") if isinstance(model_config.get("model_name"), str) else None
        return AgentReport(tokens=total(inp, out), input_tokens=inp, output_tokens=out,
                           cached_input_tokens=cached, cache_write_tokens=written, cost_usd=cost,
                           cost_source="agent" if cost is not None else None, model=model,
                           outcome={"exit_status": status, "api_calls": calls},
                           infra_error=infra, notes=tuple(notes))


def _exception_text(messages) -> str | None:
    """The message of the exception a run died on (mini writes it into its last message)."""
    last = messages[-1] if isinstance(messages, list) and messages else None
    extra = last.get("extra") if isinstance(last, dict) else None
    text = extra.get("exception_str") if isinstance(extra, dict) else None
    if not isinstance(text, str) and isinstance(last, dict) and last.get("role") == "exit":
        text = last.get("content")
    return text if isinstance(text, str) and text.strip() else None


def _tokens(messages) -> tuple[int | None, int | None, int | None, int | None]:
    inp = out = cached = written = None
    if not isinstance(messages, list):
        return inp, out, cached, written
    for message in messages:
        if not isinstance(message, dict):
            continue
        extra = message.get("extra")
        response = extra.get("response") if isinstance(extra, dict) else None
        response = response if isinstance(response, dict) else {}
        usage = response.get("usage")
        if not isinstance(usage, dict) and message.get("object") == "response":
            usage = message.get("usage")
        if not isinstance(usage, dict):
            continue
        prompt = count(usage.get("prompt_tokens", usage.get("input_tokens")))
        completion = count(usage.get("completion_tokens", usage.get("output_tokens")))
        if prompt is None or completion is None:
            continue
        details = usage.get("prompt_tokens_details", usage.get("input_tokens_details"))
        hit = count(details.get("cached_tokens")) if isinstance(details, dict) else None
        inp, out = add(inp, prompt), add(out, completion)
        cached = add(cached, hit)
        written = add(written, count(usage.get("cache_creation_input_tokens")))
    return inp, out, cached, written


PRESET = MiniSweAgent()
