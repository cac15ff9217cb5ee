"""Whether a pull request can change the verdict, pure: its changed paths against what the
verdict depends on (the agent's harness, tasks/, ci-eval.yaml, baseline.json, the workflows,
where the pinned agent CLI version lives). A PR that touches none of them spends no agent run
(`ci-eval plan --github-output`); the required check still reports, with one line."""

from __future__ import annotations

from collections.abc import Iterable

NAMES_SHOWN = 5


def relevant_changes(changed: Iterable[str], watched: Iterable[str]) -> list[str]:
    """The changed paths that can change the verdict: a watched path itself or anything under
    it (a watched "tasks" or "tasks/" covers "tasks/task-001-x/prompt.md")."""
    folders = tuple(w.rstrip("/") for w in watched if w.strip("/"))
    return sorted(path for path in set(changed)
                  if any(path == w or path.startswith(w + "/") for w in folders))


def idle_reason(changed: list[str]) -> str:
    """The one line a PR that changes nothing of the verdict's inputs gets."""
    names = sorted(set(changed))
    shown = ", ".join(names[:NAMES_SHOWN]) + (f" and {len(names) - NAMES_SHOWN} more"
                                              if len(names) > NAMES_SHOWN else "")
    return ("no agent run: this pull request changes nothing the verdict depends on (the "
            "agent's harness, tasks/, ci-eval.yaml, baseline.json, the workflows)"
            + (f"; it changes {shown}" if names else ""))
