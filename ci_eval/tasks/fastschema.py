"""A fast yes for valid instances of our own schemas; jsonschema explains everything else.

jsonschema walks an instance through generic machinery (a validator object per node): ~0.5 ms
per metadata.json and ~1.5 ms per baseline entry, so 1,000 tasks cost 0.5 s to load and a
1,000-entry baseline 1.5 s. `compile_schema` turns a schema into plain nested Python checks
that ACCEPT ONLY WHAT JSONSCHEMA ACCEPTS; they may reject more (an integral float where an
integer is asked, NaN), and whatever they reject goes to jsonschema, which has the last word and
the messages. So the answer for a valid instance is the same, found in microseconds.

Only the keywords our schemas use are known (type, required, properties, additionalProperties,
propertyNames, items, uniqueItems of strings, minimum, maximum, exclusiveMinimum,
exclusiveMaximum, minLength, maxLength, minItems, maxItems, minProperties, maxProperties,
pattern, format "date",
enum, const, local "$ref", oneOf, anyOf, allOf, plus annotations); a schema using any other
keyword compiles to None and is always checked by jsonschema.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]
ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description",
                         "examples", "default", "x-expected", "x-synonyms",
                         "x-key-word"})
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class _Unknown(Exception):
    """A keyword (or a form of one) this module does not check."""


def compile_schema(schema: dict) -> Check | None:
    try:
        return _compile(schema, schema, {})
    except _Unknown:
        return None


def _is(kind: str, value: Any) -> bool:
    """Strictly of JSON type `kind` (a subset of what jsonschema counts as that type)."""
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))
    raise _Unknown(kind)


def _loosely(kind: str, value: Any) -> bool:
    """Of JSON type `kind` as jsonschema counts it (an integral float is an integer)."""
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return _is(kind, value)


def _resolve(ref: str, root: dict) -> Any:
    if not ref.startswith("#/"):
        raise _Unknown(ref)
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise _Unknown(ref)
        node = node[part]
    return node


def _compile(node: Any, root: dict, done: dict) -> Check:
    if node is True:
        return lambda value: True
    if node is False:
        return lambda value: False
    if not isinstance(node, dict):
        raise _Unknown(type(node).__name__)
    if id(node) in done:  # a $ref seen before (or being compiled: recursion)
        return lambda value: done[id(node)](value)
    done[id(node)] = lambda value: False  # replaced below
    checks: list[Check] = []
    properties = {key: _compile(sub, root, done) for key, sub in node.get("properties", {}).items()}
    for key, value in node.items():
        if key in ANNOTATIONS or key == "properties":
            continue
        checks.append(_keyword(key, value, node, properties, root, done))
    if properties:
        def check_properties(value: Any) -> bool:
            return not isinstance(value, dict) or all(
                properties[k](v) for k, v in value.items() if k in properties)
        checks.append(check_properties)

    def check(value: Any) -> bool:
        return all(one(value) for one in checks)

    done[id(node)] = check
    return check


def _keyword(key: str, value: Any, node: dict, properties: dict, root: dict,
             done: dict) -> Check:
    if key == "$ref":
        return _compile(_resolve(value, root), root, done)
    if key == "type":
        kinds = [value] if isinstance(value, str) else list(value)
        for kind in kinds:
            _is(kind, None)  # an unknown type name raises
        return lambda x: any(_is(kind, x) for kind in kinds)
    if key == "required":
        return lambda x: not isinstance(x, dict) or all(name in x for name in value)
    if key == "additionalProperties":
        extra = _compile(value, root, done)
        return lambda x: not isinstance(x, dict) or all(
            extra(v) for k, v in x.items() if k not in properties)
    if key == "propertyNames":
        names = _compile(value, root, done)
        return lambda x: not isinstance(x, dict) or all(names(k) for k in x)
    if key == "items":
        item = _compile(value, root, done)
        return lambda x: not isinstance(x, list) or all(item(v) for v in x)
    if key == "uniqueItems":
        if value is not True:
            raise _Unknown(key)
        return lambda x: not isinstance(x, list) or (
            all(isinstance(v, str) for v in x) and len(set(x)) == len(x))
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        test = {"minimum": lambda x: x >= value, "maximum": lambda x: x <= value,
                "exclusiveMinimum": lambda x: x > value,
                "exclusiveMaximum": lambda x: x < value}[key]
        return lambda x: not _loosely("number", x) or (_is("number", x) and test(x))
    if key in ("minLength", "maxLength"):
        return lambda x: not isinstance(x, str) or (
            len(x) >= value if key == "minLength" else len(x) <= value)
    if key in ("minItems", "maxItems"):
        return lambda x: not isinstance(x, list) or (
            len(x) >= value if key == "minItems" else len(x) <= value)
    if key in ("minProperties", "maxProperties"):
        return lambda x: not isinstance(x, dict) or (
            len(x) >= value if key == "minProperties" else len(x) <= value)
    if key == "pattern":
        pattern = re.compile(value)
        return lambda x: not isinstance(x, str) or pattern.search(x) is not None
    if key == "format":
        if value != "date":
            raise _Unknown(f"format {value}")
        return lambda x: not isinstance(x, str) or _is_date(x)
    if key in ("enum", "const"):
        allowed = value if key == "enum" else [value]
        return lambda x: any(type(x) is type(a) and x == a for a in allowed)
    if key in ("allOf", "anyOf"):
        branches = [_compile(sub, root, done) for sub in value]
        combine = all if key == "allOf" else any
        return lambda x: combine(branch(x) for branch in branches)
    if key == "oneOf":
        typed = [(_compile(sub, root, done), _declared_types(sub, root)) for sub in value]

        def one_of(x: Any) -> bool:
            # exactly one branch passes, and every other one surely fails (by its type), so
            # jsonschema also counts exactly one
            passing = [i for i, (branch, _) in enumerate(typed) if branch(x)]
            return len(passing) == 1 and all(
                kinds is not None and not any(_loosely(k, x) for k in kinds)
                for i, (_, kinds) in enumerate(typed) if i != passing[0])
        return one_of
    raise _Unknown(key)


def _declared_types(node: Any, root: dict) -> list[str] | None:
    while isinstance(node, dict) and "$ref" in node and "type" not in node:
        node = _resolve(node["$ref"], root)
    if not isinstance(node, dict) or "type" not in node:
        return None
    kinds = node["type"]
    return [kinds] if isinstance(kinds, str) else list(kinds)


def _is_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True
