"""The repo's harness now of the agent a results folder names: what `compare` and `baseline
update` hold the results' harness digest against, to name the files that changed."""

from __future__ import annotations

from pathlib import Path

from ci_eval.agents.config_file import CONFIG_FILE, config_path, load_config, resolve_agent
from ci_eval.agents.harness import agent_harness
from ci_eval.errors import UserError


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
