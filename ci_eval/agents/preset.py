"""The one interface every agent preset implements. Pure: it builds argv and environment values
and reads text; starting the tool, capturing its output and reading its files is run/'s job.

A preset is one module (agents/claude_code.py is the model): a Preset subclass whose class
attributes say everything ci-eval knows about the tool, and `PRESET = TheSubclass()`:

    name, program          the preset's name in ci-eval.yaml, the executable on PATH
    key_env, pass_env, fixed_env, login_file, login_folder_env, model_env, base_url_env
                           its environment (below)
    install                agents/installs.Install: how `ci-eval init` installs it on a runner
                           (npm/pip package and pinned version, secrets), the pin tests/real_clis.py
                           installs too; installs.NO_INSTALL (the default): init refuses it
    api_hosts              the model API hosts `network: api-only` lets it reach
    harness_files          the repo files it reads by itself (its default harness)

It is listed in agents/presets.py's BUILTIN_MODULES, or, from another distribution, registered
under the entry point group `ci_eval.presets` (name = the preset's name, value = the PRESET
object: `my-agent = "my_package.preset:PRESET"`; docs/agents.md).

What the runner does with a preset (AgentConfig.preset names it, presets.PRESETS holds them):

    preset = PRESETS[agent.preset]
    env = allowed_env(BASE_ENV_ALLOWLIST + preset.key_env + preset.pass_env + agent.env)
    env |= preset.env(agent.model) | preset.run_env(run_dir) | CI_EVAL_* variables  # fixed win
    HOME: a fresh folder of the run (home: run, the default), holding a copy of the login file
          when that is how the tool logs in and preset.home_files(agent.model)
    argv = preset.argv(prompt_text, prompt_file, workspace, run_dir, agent.model, agent.args)
    ... run argv in the workspace (stdin /dev/null), output = stdout+stderr (capped, tail kept) ...
    files = {key: text of path, capped, never through a symlink}
            for key, path in preset.output_files(run_dir).items() if it exists
    report = cost_from_pricing(preset.parse(output, exit_code, files), agent.model, pricing)

`exit_code` is None when the tool was killed (timeout). `parse` never raises: output that is
malformed, truncated or hostile gives a report with notes and no usage.

Token counts are normalised across tools:
- input_tokens: every prompt token the model read, including cache reads and cache writes;
- cached_input_tokens / cache_write_tokens: the parts of input_tokens read from / written to a
  prompt cache (None when the tool does not say);
- output_tokens: every generated token, including reasoning/"thinking" tokens;
- tokens: input_tokens + output_tokens when both are known, else the tool's own total.
cost_usd is None when the tool reports no cost, never 0 for unknown; cost_source says where a
cost came from ("agent": the tool's output, "pricing": ci-eval.yaml's pricing table).

An infra_error means "infrastructure, retry, never score": a missing or invalid key (auth), a
rate limit or quota (rate_limit), an overloaded provider, 529/503 (overloaded), an unreachable
network (network), or the tool refusing its own configuration or arguments before doing
anything (setup). It is read only from the tool's own error channel (an error flag, an error
event, a documented exit code), never from model text.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from ci_eval.agents.installs import NO_INSTALL, Install
from ci_eval.strict_json import NUMBER_LIMITS

INFRA_KINDS = ("auth", "rate_limit", "overloaded", "network", "setup")
COST_SOURCES = ("agent", "pricing")

# Keys of the providers that litellm-based tools (aider, mini-swe-agent) and goose can use.
PROVIDER_KEYS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "XAI_API_KEY",
    "AZURE_API_KEY",
    "AWS_ACCESS_KEY_ID",
)
# litellm (aider, mini-swe-agent) fetches its model price list from GitHub at start unless told
# to use the copy it ships: offline that fetch fails only after its own retries.
LITELLM_OFFLINE = MappingProxyType({"LITELLM_LOCAL_MODEL_COST_MAP": "True"})
PROXY_ENV = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")


@dataclass(frozen=True)
class InfraError:
    """An infrastructure failure: kind is one of INFRA_KINDS, reason one line for the record
    (at most REASON_LIMIT characters; build it with make_infra())."""

    kind: str
    reason: str

    def __str__(self) -> str:
        return self.reason


REASON_LIMIT = 240


def make_infra(kind: str, reason: str) -> InfraError:
    return InfraError(kind, one_line(reason, REASON_LIMIT))


@dataclass(frozen=True)
class ModelUsage:
    """Usage of one model, when a tool reports usage per model (pricing each at its own price)."""

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class AgentReport:
    """What a preset read from one run of its tool (see the module docstring for the fields)."""

    tokens: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    cost_source: str | None = None
    model: str | None = None  # as the tool reported it (the main model when there are several)
    model_usage: tuple[ModelUsage, ...] = ()
    outcome: Mapping[str, Any] = field(default_factory=dict)  # the tool's own outcome fields
    infra_error: InfraError | None = None
    notes: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        return "; ".join(self.notes)

    def usage(self) -> dict:
        """The usage fields of a results record (None where unknown)."""
        return {
            "tokens": self.tokens,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": self.cost_usd,
            "cost_source": self.cost_source,
        }


class Preset(ABC):
    """One agent CLI. Subclasses set the class attributes and implement argv and read."""

    name: ClassVar[str]  # as used in ci-eval.yaml `preset:` and `--agent`
    program: ClassVar[str]  # the executable argv[0] names (looked up on PATH)
    key_env: ClassVar[tuple[str, ...]]  # credentials: at least one must be set
    pass_env: ClassVar[tuple[str, ...]] = ()  # optional settings let through (base URLs, ...)
    fixed_env: ClassVar[Mapping[str, str]] = {}  # always set, whatever the environment says
    # A file-based login (`claude login`, ...), which stands in for a key variable: (folder
    # under HOME, file in it), the folder moved by login_folder_env when that is set.
    login_file: ClassVar[tuple[str, str] | None] = None
    login_folder_env: ClassVar[str | None] = None
    # A tool with no default model: the variables that may name it instead of `model:`
    # (None: the tool has a default)
    model_env: ClassVar[tuple[str, ...] | None] = None
    install: ClassVar[Install] = NO_INSTALL
    api_hosts: ClassVar[tuple[str, ...]] = ()  # what `network: api-only` lets through

    def login_path(self, environ: Mapping[str, str]) -> str | None:
        """Where the tool keeps a file-based login in this environment, or None."""
        if self.login_file is None:
            return None
        folder, name = self.login_file
        moved = environ.get(self.login_folder_env) if self.login_folder_env else None
        if moved:
            return os.path.join(moved, name)
        home = environ.get("HOME")
        return os.path.join(home, folder, name) if home else None

    def env(self, model: str | None) -> dict[str, str]:
        """Values to set in the tool's environment (on top of the allow-listed variables)."""
        return dict(self.fixed_env)

    def run_env(self, run_dir: str) -> dict[str, str]:
        """Values set for one run, naming its folder (where the tool keeps its state: outside
        the workspace, read back through output_files)."""
        return {}

    # The variables that take a gateway's URL (ci-eval.yaml `base_url:`), for tools that read
    # one from the environment.
    base_url_env: ClassVar[tuple[str, ...]] = ()

    def gateway_env(self, base_url: str, model: str | None) -> dict[str, str]:
        """Environment values that point the tool at base_url."""
        return {name: base_url for name in self.base_url_env}

    def gateway_args(self, base_url: str) -> list[str]:
        """Arguments that point the tool at base_url (placed before the agent's `args`)."""
        return []

    # The files and folders of a project the tool reads by itself (its instructions, settings,
    # hooks, skills): an agent's default harness (agents/harness.py), those the repo holds.
    harness_files: ClassVar[tuple[str, ...]] = ()

    def harness_defaults(self, extra_args: tuple[str, ...],
                         read_text: Callable[[str], str | None]) -> tuple[str, ...]:
        """The repo paths of the default harness: harness_files, and what a file among them or
        the entry's args name (read_text: a repo file's text, None when it is not there)."""
        return self.harness_files

    def home_files(self, model: str | None) -> dict[str, str]:
        """Files the tool needs in its HOME: {path relative to HOME: text}, such as
        {".gemini/settings.json": "{...}"}. Written into the agent's own HOME of every run
        (run/sandbox/home.py) before the tool starts, after the login file; not written with
        `home: host` (the host's HOME is the user's). Paths are relative, without "..".
        """
        return {}

    def gateway_home_files(self, base_url: str, model: str | None) -> dict[str, str]:
        """home_files() for an entry with `base_url:`, for a tool that takes its base URL only
        from a settings file (their paths win over home_files' own)."""
        return {}

    @abstractmethod
    def argv(self, prompt_text: str, prompt_file: str, workspace: str, run_dir: str,
             model: str | None, extra_args: tuple[str, ...]) -> list[str]:
        """How to start the tool headless on the prompt, edits allowed without asking, in
        `workspace` (also the working directory). Files the tool is told to write go under
        run_dir, outside the workspace."""

    def output_files(self, run_dir: str) -> dict[str, str]:
        """key -> absolute path of files the runner reads after the tool exits, for parse."""
        return {}

    def parse(self, output: str, exit_code: int | None, files: Mapping[str, str]) -> AgentReport:
        """Usage, cost, outcome and infra_error from the tool's output; never raises."""
        try:
            return self.read(output or "", exit_code, dict(files or {}))
        except Exception as exc:  # noqa: BLE001 - a reader defect is a note on the run, not a crash
            return AgentReport(notes=(f"{self.name}: output not understood ({type(exc).__name__})",))

    @abstractmethod
    def read(self, output: str, exit_code: int | None, files: dict[str, str]) -> AgentReport:
        """parse() without the safety net."""


def litellm_base_url_env(base_url: str, model: str | None) -> dict[str, str]:
    """A litellm-based tool (aider, mini-swe-agent) reads the base URL of the model's provider:
    ANTHROPIC_API_BASE for anthropic/ and claude models, GEMINI_API_BASE for gemini/, else the
    OpenAI-compatible OPENAI_API_BASE (and OPENAI_BASE_URL, which newer litellm reads first)."""
    name = (model or "").lower()
    if name.startswith(("anthropic/", "claude")):
        return {"ANTHROPIC_API_BASE": base_url}
    if name.startswith("gemini/"):
        return {"GEMINI_API_BASE": base_url}
    return {"OPENAI_API_BASE": base_url, "OPENAI_BASE_URL": base_url}


# --- helpers for readers ------------------------------------------------------------------------


def count(value: Any) -> int | None:
    """A token count from hostile JSON: a whole number 0-10**12 (1200.0 is 1200), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= NUMBER_LIMITS["tokens"]:
        return value
    return None


def money(value: Any) -> float | None:
    """A cost in USD from hostile JSON: a finite number 0-10**6, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not 0 <= value <= NUMBER_LIMITS["cost"]:
        return None  # float(10**400) overflows
    value = float(value)
    return value if math.isfinite(value) and 0 <= value <= NUMBER_LIMITS["cost"] else None


def add(*values: int | None) -> int | None:
    """Sum of the known values; None when none is known."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def total(input_tokens: int | None, output_tokens: int | None, reported: int | None = None) -> int | None:
    if input_tokens is not None and output_tokens is not None:
        return input_tokens + output_tokens
    return reported


def one_line(text: Any, limit: int = 200) -> str:
    """Text for a reason or note: one line, at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
