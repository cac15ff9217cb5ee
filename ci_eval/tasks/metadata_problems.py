"""A task folder's files that loading needs (prompt.md, checks.py or Harbor's tests/test.sh,
metadata.json: read, parsed, against the schema, keys that look like typos) -> Problems. What
load_task() insists on; the rules: tasks/problems.py."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from ci_eval import strict_json
from ci_eval.output import read_user_file
from ci_eval.tasks import schema
from ci_eval.tasks.model import METADATA_FILE, Problem

# Unknown metadata keys that are taken for typos of a known key even though difflib disagrees.
METADATA_KEY_ALIASES = {
    "timeout": "timeout_seconds",
    "timeouts": "timeout_seconds",
    "timeout_secs": "timeout_seconds",
    "timeout_s": "timeout_seconds",
    "require": "requires",
    "required": "requires",
    "requirements": "requires",
    "label": "human_label",
    "labels": "human_label",
    "tag": "tags",
    "level": "difficulty",
    "date": "created",
    "created_at": "created",
    "created_on": "created",
}



def load_problems(path: Path) -> list[Problem]:
    """What load_task() insists on: prompt.md, checks.py, metadata.json (JSON + schema)."""
    return loaded_metadata(path)[1]


def loaded_metadata(path: Path) -> tuple[object, list[Problem]]:
    """(the parsed metadata.json, load_problems): a task folder read once."""
    task = path.name
    problems: list[Problem] = []
    prompt = path / "prompt.md"
    if not prompt.is_file():
        problems.append(Problem(prompt, "missing (the exact prompt given to the agent)", task=task))
    else:
        try:
            text = read_user_file(prompt).decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(prompt, f"not UTF-8 text (byte {exc.start})", task=task))
        else:
            if not text.strip():
                problems.append(Problem(prompt, "is empty (expected the prompt text)", task=task))
    metadata_path = path / METADATA_FILE
    metadata, read_problems = read_metadata(metadata_path, task=task)
    harbor = harbor_verified(metadata)
    checks = path / ("tests/test.sh" if harbor else "checks.py")
    if not checks.is_file():
        problems.append(Problem(checks, "missing (Harbor's verifier: writes the reward to "
                                "/logs/verifier/reward.txt)" if harbor else
                                "missing (deterministic checks: exit 0 pass, 1 fail)", task=task))
    problems += read_problems
    if not read_problems:
        problems += metadata_problems(metadata, metadata_path, task=task)
    return metadata, problems


def harbor_verified(metadata: object) -> bool:
    """Whether the task is judged by Harbor's tests/test.sh (metadata docker.verifier) instead
    of a checks.py."""
    docker = metadata.get("docker") if isinstance(metadata, dict) else None
    return isinstance(docker, dict) and docker.get("verifier") == "harbor"


def read_metadata(path: Path, *, task: str | None = None) -> tuple[object, list[Problem]]:
    if not path.is_file():
        return None, [
            Problem(path, 'missing (expected {"difficulty", "area", "tags", "created"})', task=task)
        ]
    try:
        text = read_user_file(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(path, f"not UTF-8 text (byte {exc.start})", task=task)]
    try:
        return strict_json.loads(text), []
    except json.JSONDecodeError as exc:
        return None, [
            Problem(
                path,
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                field=f"line {exc.lineno}",
                task=task,
            )
        ]
    except strict_json.StrictJSONError as exc:
        return None, [Problem(path, f"invalid JSON: {exc}", task=task)]


def metadata_problems(metadata: object, path: Path, *, task: str | None = None) -> list[Problem]:
    """Schema violations and typo'd keys of a parsed metadata.json, one Problem per JSON path."""
    problems = [
        Problem(Path(path), p.message, field=p.json_path, task=task)
        for p in schema.schema_problems(metadata, "metadata")
    ]
    # NaN passes every bound of a JSON schema (all comparisons with it are false).
    bad_number = strict_json.first_non_finite(metadata)
    if bad_number is not None and bad_number[0] not in {p.field for p in problems}:
        where, value = bad_number
        problems.append(
            Problem(Path(path), f"expected a finite number, got {strict_json.show_number(value)}",
                    field=where, task=task)
        )
    if isinstance(metadata, dict):
        known = list(schema.property_names("metadata"))
        for key in metadata:
            guess = _typo_of(str(key), known)
            if guess:
                problems.append(
                    Problem(
                        Path(path),
                        f"unknown key, did you mean {guess!r}? (custom keys are allowed; "
                        "prefix them with 'x-' to avoid this check)",
                        field=schema.json_path([key]),
                        task=task,
                    )
                )
    return problems


def _typo_of(key: str, known: list[str]) -> str | None:
    if key in known or key.startswith(("x-", "x_")):
        return None
    normal = re.sub(r"[\s-]+", "_", key.strip()).lower()
    if normal in known:
        return normal
    if normal in METADATA_KEY_ALIASES:
        return METADATA_KEY_ALIASES[normal]
    close = difflib.get_close_matches(normal, known, n=1, cutoff=0.8)
    return close[0] if close else None
