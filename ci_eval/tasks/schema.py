"""Packaged JSON schemas (ci_eval/tasks/schemas/NAME.schema.json); validation naming the field.

    from ci_eval.tasks import schema
    schema.validate_instance(data, "metadata", path="tasks/task-001-x/metadata.json")
    # UserError: tasks/task-001-x/metadata.json: $.difficulty: expected integer 1-5, got "hard"

    for problem in schema.schema_problems(data, "metadata"):   # every problem, not just the first
        print(problem.json_path, problem.message)

A schema is found by name: any ci_eval/tasks/schemas/*.schema.json file is picked up automatically
(`known_schemas()`), which is also what `ci-eval schema NAME` prints. Messages are built from the
schema node that failed ("expected integer 1-5", "expected date YYYY-MM-DD", "expected positive
number or object with keys agent, checks"), so a new schema gets readable messages for free.
A node may carry a non-standard "x-expected" string to override that wording (JSON Schema
ignores unknown keywords), and "x-synonyms" ({word people use: the key they mean}) for the
did-you-mean of an unknown key; the root may carry "x-key-word", what a key is called in
messages ("unknown key", "required key is missing"; default "field"). Formats (e.g. "date") are checked. At most one problem is reported
per JSON path.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_eval.errors import UserError
from ci_eval.strict_json import json_path
from ci_eval.tasks.fastschema import compile_schema

SCHEMA_SUFFIX = ".schema.json"


def schemas_dir() -> Path:
    return Path(__file__).resolve().parent / "schemas"


def known_schemas() -> list[str]:
    """Names of the packaged schemas, sorted (e.g. ["baseline", "metadata"])."""
    folder = schemas_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(SCHEMA_SUFFIX)] for p in folder.glob("*" + SCHEMA_SUFFIX))


# The file each schema describes, which also names it: `ci-eval schema ci-eval.yaml`.
SCHEMA_FOR_FILE = {"ci-eval.yaml": "ci-eval", "metadata.json": "metadata",
                   "rubric.yaml": "rubric", "baseline.json": "baseline"}


def schema_path(name: str) -> Path:
    """Path of schema NAME (or of the file it describes: ci-eval.yaml); UserError listing the
    known names if there is none."""
    name = SCHEMA_FOR_FILE.get(name, name)
    if name in known_schemas():
        return schemas_dir() / f"{name}{SCHEMA_SUFFIX}"
    known = ", ".join(known_schemas()) or "none"
    raise UserError(f"unknown schema {name!r} (known: {known})", field="schema")


def schema_text(name: str) -> str:
    """The schema file's text exactly as packaged (what `ci-eval schema NAME` prints)."""
    return schema_path(name).read_text(encoding="utf-8")


@functools.cache
def _load(name: str) -> dict:
    return json.loads(schema_text(name))


def load_schema(name: str) -> dict:
    """The parsed schema NAME (a fresh copy; callers may modify it)."""
    return json.loads(json.dumps(_load(name)))


@functools.cache
def _validator_for_name(name: str):
    return _make_validator(_load(name))


def _make_validator(schema: dict):
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@dataclass(frozen=True)
class SchemaProblem:
    json_path: str  # "$", "$.difficulty", "$.tags[2]", "$.human_label.expected_pass_rate"
    message: str  # "expected integer 1-5, got \"hard\""
    parts: tuple[str | int, ...] = ()  # the path as keys and indices: ("tags", 2)

    @property
    def dotted(self) -> str | None:
        """The path as a YAML reader names it: "agents.claude-code.args[2]" (None: the top)."""
        text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.parts)
        return text.lstrip(".") or None

    def __str__(self) -> str:
        return f"{self.json_path}: {self.message}"


@functools.cache
def _fast_check_for_name(name: str):
    return compile_schema(_load(name))


@functools.cache
def property_names(name: str) -> tuple[str, ...]:
    """The top-level keys schema NAME knows."""
    return tuple(_load(name).get("properties", {}))


def schema_problems(instance: Any, schema: str | dict) -> list[SchemaProblem]:
    """Every problem of `instance` against schema NAME (or a schema dict), one per JSON path,
    in document order of the paths. Empty list = valid. A packaged schema's instance is first
    checked by its compiled fast check (fastschema.py), which accepts only valid instances;
    jsonschema decides the rest and words the problems."""
    if isinstance(schema, str):
        fast = _fast_check_for_name(schema)
        if fast is not None and fast(instance):
            return []
    validator = _validator_for_name(schema) if isinstance(schema, str) else _make_validator(schema)
    problems: list[SchemaProblem] = []
    seen: set[str] = set()
    errors = sorted(validator.iter_errors(instance), key=lambda e: _sort_key(e.absolute_path))
    for error in errors:
        for problem in _explain(validator, error):
            if problem.json_path not in seen:
                seen.add(problem.json_path)
                problems.append(problem)
    return problems


def validate_instance(instance: Any, schema: str | dict, *, path: object = None) -> None:
    """Raise UserError "PATH: $.field: expected ..., got ..." for the first problem, if any."""
    problems = schema_problems(instance, schema)
    if problems:
        first = problems[0]
        raise UserError(first.message, path=path, field=first.json_path)


# --- messages ---------------------------------------------------------------------------------


def render(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of a value for 'got ...'."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(node: Any, root: dict | None = None) -> str | None:
    """What a schema node expects, in a few words; None if there is nothing short to say.
    `root` is the whole schema, used to resolve local "$ref": "#/$defs/..." references."""
    node = _deref(node, root)
    if not isinstance(node, dict):
        return None
    if isinstance(node.get("x-expected"), str):
        return node["x-expected"]
    for key in ("oneOf", "anyOf"):
        if key in node:
            parts = [describe(branch, root) for branch in node[key]]
            said = [part for part in parts if part]
            if len(said) == len(parts):
                return " or ".join(said)
            return None
    if "const" in node:
        return render(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(render(v) for v in node["enum"])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        ex_low, ex_high = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
        if low is not None and high is not None:
            return f"{kind} {_num(low)}-{_num(high)}"
        if ex_low == 0 and high is None and ex_high is None:
            return f"positive {kind}"
        bounds = []
        if low is not None:
            bounds.append(f">= {_num(low)}")
        if ex_low is not None:
            bounds.append(f"> {_num(ex_low)}")
        if high is not None:
            bounds.append(f"<= {_num(high)}")
        if ex_high is not None:
            bounds.append(f"< {_num(ex_high)}")
        return " ".join([kind, " and ".join(bounds)]).strip()
    if kind == "string":
        if node.get("format") == "date":
            return "date YYYY-MM-DD"
        if node.get("format") == "date-time":
            return "date-time (ISO 8601)"
        if "pattern" in node:
            return f"string matching {node['pattern']}"
        if node.get("minLength") == 1:
            return "non-empty string"
        return "string"
    if kind == "boolean":
        return "true or false"
    if kind == "null":
        return "null"
    if kind == "array":
        items = node.get("items")
        if isinstance(items, dict) and items.get("type") in (
            "string",
            "integer",
            "number",
            "object",
        ):
            return f"list of {items['type']}s"
        return "list"
    if kind == "object":
        props = node.get("properties")
        if props and len(props) <= 4:
            return "object with keys " + ", ".join(props)
        return "object"
    return None


def _num(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _deref(node: Any, root: dict | None) -> Any:
    """Resolve a local "#/$defs/x" reference against the whole schema."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if root is not None and isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            if not isinstance(target, dict) or part not in target:
                return node
            target = target[part]
        return target
    return node


def _sort_key(parts: Iterable[Any]) -> list:
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts]


def _explain(validator, error) -> list[SchemaProblem]:
    root = validator.schema
    path = list(error.absolute_path)
    kind = error.validator
    node = error.schema if isinstance(error.schema, dict) else {}
    got = render(error.instance)

    if kind in ("oneOf", "anyOf") and error.context:
        branch = _matching_branch(validator, error)
        if branch is not None:
            inner = [e for e in error.context if e.relative_schema_path[0] == branch]
            inner.sort(key=lambda e: -len(e.absolute_path))
            return _explain(validator, inner[0])
    if kind == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        if node.get("additionalProperties") is False and isinstance(error.instance, dict):
            # a key spelled wrong is both missing and unknown: said once, as the unknown one
            # with its did-you-mean
            extra = [str(k) for k in error.instance if k not in (node.get("properties") or {})]
            missing = [name for name in missing
                       if not difflib.get_close_matches(name, extra, n=1, cutoff=0.6)]
            if not missing:
                return []
        problems = []
        for name in missing:
            expected = describe((node.get("properties") or {}).get(name), root)
            hint = f" (expected {expected})" if expected else ""
            problems.append(
                _at([*path, name], f"required {root.get('x-key-word', 'field')} is missing{hint}")
            )
        return problems or [_at(path, error.message)]
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = list((node.get("properties") or {}).keys())
        word = f"unknown {root.get('x-key-word', 'field')}"
        return [_at([*path, k], word + _known_hint(k, known, node))
                for k in error.instance if k not in known]
    if kind == "uniqueItems" and isinstance(error.instance, list):
        seen: list = []
        for item in error.instance:
            if item in seen:
                return [
                    _at(path, f"expected unique items, got {render(item)} twice"
                    )
                ]
            seen.append(item)
    if kind == "minProperties" and node.get("properties"):
        names = ", ".join(node["properties"])
        return [_at(path, f"expected at least one of {names}, got {got}")]
    if kind in ("minItems", "maxItems"):
        return [_at(path, f"{error.message}")]
    expected = describe(node, root)
    if expected:
        return [_at(path, f"expected {expected}, got {got}")]
    return [_at(path, error.message)]


def _at(parts: Iterable[Any], message: str) -> SchemaProblem:
    parts = tuple(parts)
    return SchemaProblem(json_path(parts), message, parts)


def _known_hint(key: Any, known: list[str], node: dict) -> str:
    """" (did you mean 'x'? known: a, b)" for an unknown key: the node's "x-synonyms" (words
    people use for a key, where spelling alone would suggest another), else the closest name."""
    if not known:
        return ""
    synonyms = node.get("x-synonyms") or {}
    close = [synonyms[key]] if key in synonyms else \
        difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return f" ({guess}known: {', '.join(known)})"


def _matching_branch(validator, error) -> int | None:
    """For a oneOf/anyOf failure: the one branch whose type fits the instance, if exactly one."""
    branches = error.validator_value
    fitting = []
    for index, branch in enumerate(branches):
        resolved = _deref(branch, validator.schema)
        kind = resolved.get("type") if isinstance(resolved, dict) else None
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        if not kinds or any(validator.is_type(error.instance, k) for k in kinds):
            fitting.append(index)
    if len(fitting) == 1 and any(e.relative_schema_path[0] == fitting[0] for e in error.context):
        return fitting[0]
    return None
