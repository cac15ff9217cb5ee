"""The repo's harness now of the agent a results folder names: what `compare` and `baseline
update` hold the results' harness digest against, to name the files that changed."""

from __future__ import annotations

from pathlib import Path

from ci_eval.agents.config_file import CONFIG_FILE, config_path, load_config, resolve_agent
from ci_eval.agents.harness import agent_harness
from ci_eval.errors import UserError
from ci_eval.verdict.harness_changes import harness_digest


def harness_files_of(root: Path) -> callable:
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
    files = harness_files_of(root)(identity)
    if files is not None and harness_digest(files) == digest:
        if not files:
            return "harness: none"
        names = sorted(files)
        more = f" and {len(names) - FILES_LISTED} more" if len(names) > FILES_LISTED else ""
        return f"harness {digest[:12]}: {', '.join(names[:FILES_LISTED])}{more}"
    now = f"{harness_digest(files)[:12]} now" if files is not None else "not known now"
    return f"harness {digest[:12]} (the repo's harness of this agent is {now}: files not listed)"
