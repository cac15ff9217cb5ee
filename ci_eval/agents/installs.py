"""How each preset's CLI gets onto a CI runner, and which secrets it is given there (what
`ci-eval init` writes into the workflows). Data only: the versions are the ones verified against
the real tools (docs/agents.md); move them together with that verification.

- npm presets are installed with actions/setup-node and `npm install --global --prefix PREFIX`,
  pip presets into a virtualenv of their own under PREFIX (never into ci-eval's Python: their
  dependencies are theirs); either way PREFIX/bin, holding only the agent's program, goes on
  PATH. PREFIX is $CI_EVAL_AGENT_PREFIX, else $RUNNER_TEMP/ci-eval-agent; an install already
  there at the pinned version is reused (a self-hosted runner, or the tests' cache).
- `secrets` are the repository secrets handed to the step that runs the agent: the first is the
  one init's next steps ask for; the others are alternatives the preset also accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

NODE_VERSION = "22"


@dataclass(frozen=True)
class Install:
    preset: str
    kind: str | None  # "npm", "pip", or None: no registry package (install it yourself)
    package: str = ""
    version: str = ""
    program: str = ""
    secrets: tuple[str, ...] = ()
    login: str = ""  # how a file-based login is used instead of a key, "" when there is none
    model_note: str = ""  # what else the tool needs to know (the model), "" when nothing
    needs_model: bool = False  # init refuses it without --model (the tool has no default)
    refused: str = ""  # why init cannot write a workflow that runs it ("" when it can)
    python: str = ""  # the Python a pip package needs ("3.12": set up first), "" = python3

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}" if self.kind == "npm" else \
            f"{self.package}=={self.version}"


INSTALLS: dict[str, Install] = {i.preset: i for i in (
    Install("claude-code", "npm", "@anthropic-ai/claude-code", "2.1.332", "claude",
            ("ANTHROPIC_API_KEY",),
            login="a Claude subscription instead of an API key: run `claude setup-token` and "
            "store its token as the secret CLAUDE_CODE_OAUTH_TOKEN (add it to the env: of the "
            "run step); the ~/.claude login file of `claude login` does not exist on a runner"),
    Install("codex", "npm", "@openai/codex", "0.171.0", "codex", ("OPENAI_API_KEY",),
            login="a ChatGPT login instead of an API key: `codex login` writes "
            "~/.codex/auth.json, which a hosted runner does not have; on a self-hosted runner "
            "log in once as the runner's user (or set CODEX_HOME to a folder that holds it)"),
    Install("gemini", "npm", "@google/gemini-cli", "0.61.0", "gemini", ("GEMINI_API_KEY",),
            login="a Google login instead of an API key: ~/.gemini/oauth_creds.json, on a "
            "self-hosted runner only (log in once as the runner's user)"),
    Install("aider", "pip", "aider-chat", "0.86.2", "aider",
            ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
            model_note="aider picks its model from the key it finds; name one with "
            "`model:` in an agents: entry of ci-eval.yaml (preset: aider)"),
    Install("mini-swe-agent", "pip", "mini-swe-agent", "2.4.6", "mini-swe-agent",
            ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
            model_note="mini-swe-agent needs a model: set `model:` in an agents: entry of "
            "ci-eval.yaml (preset: mini-swe-agent), e.g. anthropic/claude-sonnet-4-5",
            needs_model=True),
    Install("goose", None, program="goose", secrets=("ANTHROPIC_API_KEY",),
            model_note="goose has no npm or PyPI package: add a step before the run step that "
            "installs the `goose` binary, and set GOOSE_PROVIDER / GOOSE_MODEL",
            needs_model=True,
            refused="goose has no npm or PyPI package a workflow could install at a pinned "
            "version: init would write a workflow that cannot run. Set it up by hand: an "
            "agents: entry in ci-eval.yaml (preset: goose, model: PROVIDER/MODEL) and a step in "
            "eval.yml that installs the goose binary (docs/agents.md)"),
    Install("openhands", "pip", "openhands", "1.16.0", "openhands", ("LLM_API_KEY",),
            model_note="OpenHands needs a litellm model name: set `model:` in an agents: entry "
            "of ci-eval.yaml (preset: openhands), e.g. anthropic/claude-sonnet-4-5 (it becomes "
            "LLM_MODEL; the key is LLM_API_KEY)",
            needs_model=True, python="3.12"),
)}


def install_for(preset: str | None) -> Install | None:
    return INSTALLS.get(preset) if preset else None
