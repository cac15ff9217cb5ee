"""The repo's harness now of the agent a results folder names: what `compare` and `baseline
update` hold the results' harness digest against, to name the files that changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ci_eval.agents.config_file import (
    CONFIG_FILE,
    CONFIG_NAMES,
    config_path,
    load_config,
    resolve_agent,
)
from ci_eval.agents.harness import agent_harness, repo_text
from ci_eval.agents.presets import PRESETS
from ci_eval.errors import UserError
from ci_eval.verdict.harness_changes import harness_digest


def harness_files_of(root: Path) -> Callable[[str], dict[str, str] | None]:
    """harness_of(identity) -> {file: digest} of the agent named NAME or NAME:MODEL in root's
    ci-eval.yaml (or a preset, or a built-in), None when it cannot be told (an inline
    `--agent-cmd`, an agent no longer configured, a harness refused: compare then names the
    digest change only)."""
    root = Path(root)

    def harness_of(identity: str) -> dict[str, str] | None:
        if not identity or identity.startswith("cmd:"):
            return None
        try:
            config = load_config(root)
            agent = resolve_agent(config, identity.split(":", 1)[0], None)
            return agent_harness(agent, root, config_path=config_path(root) or root / CONFIG_FILE
                                 ).file_digests
        except UserError:
            return None

    return harness_of


FILES_LISTED = 20


def recorded_harness_line(root: Path, identity: str, digest: str) -> str:
    """`ci-eval show`'s line for a run's harness: its digest, and its files when the repo's
    harness of that agent is still the one the run used."""
    if digest == harness_digest({}):
        return "harness: none"
    files = harness_files_of(root)(identity)
    if files is not None and harness_digest(files) == digest:
        if not files:
            return "harness: none"
        names = sorted(files)
        more = f" and {len(names) - FILES_LISTED} more" if len(names) > FILES_LISTED else ""
        return f"harness {digest[:12]}: {', '.join(names[:FILES_LISTED])}{more}"
    now = f"{harness_digest(files)[:12]} now" if files is not None else "not known now"
    return f"harness {digest[:12]} (the repo's harness of this agent is {now}: files not listed)"


ALWAYS_WATCHED = ("tasks", ".github/workflows", "action.yml")


def watched_paths(root: Path, baseline_file: str) -> list[str] | None:
    """What the verdict of the default agent depends on in the repo: its harness as declared
    (or every file its preset reads, present or not: a PR adding or deleting one changes the
    harness), tasks/, the config file, the baseline, the workflows. None when it cannot be
    told (no default agent, a command agent without `harness:`, a config refused): then
    everything runs."""
    root = Path(root)
    try:
        config = load_config(root)
        if not config.default_agent:
            return None
        agent = resolve_agent(config, config.default_agent, None)
    except UserError:
        return None
    if agent.harness is not None:
        harness = [entry.path for entry in agent.harness]
    elif agent.preset:
        harness = list(PRESETS[agent.preset].harness_defaults(agent.args,
                                                              lambda name: repo_text(root, name)))
    elif agent.builtin:
        harness = []
    else:
        return None
    return [*harness, *CONFIG_NAMES, baseline_file, *ALWAYS_WATCHED]

