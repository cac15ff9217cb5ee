"""How a preset's CLI gets onto a CI runner, and which secrets it is given there (what
`ci-eval init` writes into the workflows): the shape of a preset's `install` (each preset module
holds its own, agents/claude_code.py etc.). The versions are the ones verified against the real
tools (docs/agents.md); move them together with that verification.

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


# A preset that declares no install (one from outside the package may not): init refuses it.
NO_INSTALL = Install(None, refused="the preset declares no install (Preset.install): set its "
                     "CLI up by hand in eval.yml")
