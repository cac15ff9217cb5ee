"""Why a shard ran nothing: the agent could not start or a task's `requires` is missing.

`ci-eval run --setup-problem-file FILE` writes it when its preflight refuses (exit 2, no run
started); the action writes it into the shard's results folder, so the shard's artifact carries
it, and the report (`ci-eval gate`) turns the files of every shard into ONE comment:
"agent setup broken: ANTHROPIC_API_KEY is not set".

    {"schema_version": 1, "problem": "agent claude-code (claude-code): ANTHROPIC_API_KEY is not
     set (set one of ...)", "field": "--agent", "shard": "1/2"}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ci_eval.output import ensure_dir, write_atomic

FILE_NAME = "setup-problem.json"
MAX_BYTES = 16_384  # read at most this much of one file
MAX_PROBLEM_CHARS = 1_000
_AGENT_PREFIX = re.compile(r"^agent [^:]{1,200}: ")


@dataclass(frozen=True)
class SetupProblem:
    problem: str
    field: str | None = None
    shard: str | None = None

    @property
    def headline(self) -> str:
        """The problem without the agent's name or the alternatives: "ANTHROPIC_API_KEY is not
        set"."""
        text = _AGENT_PREFIX.sub("", self.problem).split(" (", 1)[0].split("; ", 1)[0]
        return text.strip() or self.problem


def write(path: Path, problem: str, field: str | None, shard: str | None) -> None:
    ensure_dir(path.parent)
    data = {"schema_version": 1, "problem": problem[:MAX_PROBLEM_CHARS], "field": field,
            "shard": shard}
    write_atomic(path, json.dumps(data, indent=2) + "\n", field="--setup-problem-file")


def read(path: Path) -> SetupProblem:
    """A problem file as written above; anything else read as its text, cut (never trusted to
    hold more than a line)."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("problem"), str):
        return SetupProblem(f"unreadable {FILE_NAME} in {path.parent.name}")

    def text(value) -> str | None:
        return " ".join(value.split())[:MAX_PROBLEM_CHARS] if isinstance(value, str) else None

    return SetupProblem(text(data["problem"]) or "unknown problem", text(data.get("field")),
                        text(data.get("shard")))


def find(results_dir: Path, shard_glob: str) -> list[SetupProblem]:
    """The problems of every shard folder under results_dir (and of results_dir itself)."""
    folders = [results_dir, *sorted(p for p in results_dir.glob(shard_glob) if p.is_dir())]
    return [read(folder / FILE_NAME) for folder in folders
            if (folder / FILE_NAME).is_file() and not (folder / FILE_NAME).is_symlink()]
