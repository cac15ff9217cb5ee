"""The next steps `ci-eval init` prints: the agent's secrets, CLI and harness, the tasks'
requirements, the repository settings, the first baseline."""

from __future__ import annotations

import textwrap

from ci_eval.agents.harness import agent_harness
from ci_eval.agents.presets import PRESETS


def harness_step(root, agent) -> str:
    """The next step naming the files that make up the agent ("" for a built-in)."""
    if agent.builtin:
        return ""
    harness = agent_harness(agent, root)
    if harness.files:
        names = ", ".join(str(e) for e in harness.entries)
        return paragraph(f"Your agent is the {agent.preset or agent.name} tool plus its harness: "
                     f"{names} ({len(harness.files)} file(s), listed under `harness:` in "
                     "ci-eval.yaml). Every run gets them; a PR that changes them is compared "
                     "on them, and the report names the changed files (docs/harness.md).")
    preset = PRESETS.get(agent.preset) if agent.preset else None
    looked = f" (looked for {', '.join(preset.harness_files)})" if preset else ""
    return paragraph(f"No harness files found{looked}: runs measure the bare tool. List the repo "
                 "files that make up your agent (instructions, hooks, skills, its own code) "
                 "under `harness:` of its entry in ci-eval.yaml (docs/harness.md).")


def paragraph(text: str) -> str:
    """A next step's text, wrapped under its number."""
    return textwrap.fill(text, width=92, subsequent_indent="     ", break_on_hyphens=False)


def agent_step(agent, install, secrets) -> str:
    """What the agent needs on the runner: secrets, its CLI, a login, a model."""
    if agent.builtin:
        return paragraph(f"The {agent.name} agent needs no secrets (a self-test). For a real one: "
                     "`ci-eval init --force --agent claude-code` (or codex, gemini, aider, "
                     "mini-swe-agent), or your own under `agents:` in ci-eval.yaml with its keys "
                     "under `env:`, added as secrets and to the run step's `env:` in eval.yml.")
    text = ("Add the agent's secret (Settings → Secrets and variables → Actions): "
            f"`gh secret set {secrets[0]}`." if secrets else
            "List the agent's keys under `env:` in ci-eval.yaml and add them as secrets and to "
            "the run step's `env:` in eval.yml.")
    if len(secrets) > 1:
        text += (f" eval.yml's run step also passes {', '.join(secrets[1:])}: set the one of "
                 "your provider.")
    if install and install.kind:
        text += (f" The shard job installs {install.program} ({install.spec}) before the run; "
                 "bump the version there.")
    if install and install.login:
        text += f" Login: {install.login}."
    if install and install.model_note:
        text += f" Model: {install.model_note}."
    text += (" Without the secret the PR gets one comment saying so (\"agent setup broken: ... "
             "is not set\").")
    return paragraph(text)


def requires_step(requires: list[str]) -> str:
    if requires:
        return paragraph(f"Your tasks require {', '.join(requires)}: eval.yml and baseline.yml "
                     "install them with pip (pip-packages). Set the repository variable "
                     "CI_EVAL_PIP_PACKAGES to replace that list (a tool that is no PyPI "
                     "package goes in a step before the run step), and rerun `ci-eval init "
                     "--force` when tasks add one. A missing one stops the run before any "
                     "agent run.")
    return paragraph("Tasks that list tools under `requires` (metadata.json) need them on the "
                 "runner: rerun `ci-eval init --force` to write them into the workflows, or "
                 "put the Python packages in the repository variable CI_EVAL_PIP_PACKAGES "
                 "(e.g. \"pytest ruff\"). A missing one stops the run before any agent run.")


def next_steps(agent, install, secrets, action: str, requires: list[str],
               harness: str = "") -> str:
    repo = action.split("@", 1)[0]
    steps = [
        *([harness] if harness else []),
        agent_step(agent, install, secrets),
        requires_step(requires),
        paragraph("Let workflows open pull requests (baseline.yml, gc.yml): Settings → Actions → "
              "General → Workflow permissions → \"Allow GitHub Actions to create and approve "
              "pull requests\". PRs opened with GITHUB_TOKEN start no workflows; add a personal "
              "access token or GitHub App token as the secret CI_EVAL_PR_TOKEN to get "
              "ci-eval's checks on them."),
        "Check the tasks locally: ci-eval validate && ci-eval verify",
        paragraph("Commit and push; then run the \"ci-eval baseline\" workflow from the Actions tab "
              "(or locally: ci-eval run -k 40 && ci-eval baseline update --all) and merge its "
              "PR."),
        paragraph("Require one check, the report job's (\"report\"; the PR shows it as \"ci-eval / "
              "report (pull_request)\"): Settings → Branches → branch protection → Require "
              "status checks. It runs unless the workflow was cancelled and fails when the plan "
              "or a shard failed; the shard checks need not be required."),
        paragraph("gc.yml runs weekly: once eval.yml has recorded 10 runs on the default branch, "
              "tasks that passed every run and are more than 6 months old are proposed for the "
              "archive by PR."),
    ]
    body = "\n".join(f"  {n}. {text}" for n, text in enumerate(steps, 1))
    return f"\nNext steps:\n{body}\n  Docs: https://github.com/{repo}/blob/main/docs/github.md"
