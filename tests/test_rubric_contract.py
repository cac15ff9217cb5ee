"""The rubric's contract lives in two forms: rubric.schema.json (what editors and `ci-eval schema
rubric` give) and the loader's tables in grading/rubric.py (its one-line messages). They are
held equal here, key by key and kind by kind, so neither can drift from the other; each rule
beyond them (groups, ids, auto_fail) is the loader's alone and its docstring says so."""

from __future__ import annotations

import pytest

from ci_eval.grading import rubric
from ci_eval.tasks import schema

SCHEMA = schema.load_schema("rubric")
CRITERION = SCHEMA["$defs"]["criterion"]


def _kind_rules() -> dict[str, tuple[set[str], set[str]]]:
    """kind -> (keys allowed, keys required beyond id, kind, weight) as the schema says."""
    rules = {}
    for kind in CRITERION["properties"]["kind"]["enum"]:
        allowed, required = set(), set()
        for rule in CRITERION["allOf"]:
            condition = rule["if"]["properties"]["kind"]
            if kind != condition.get("const") and kind not in condition.get("enum", ()):
                continue
            then = rule["then"]
            allowed |= set(then.get("propertyNames", {}).get("enum", ()))
            required |= set(then.get("required", ())) - {"rationale"}
        rules[kind] = (allowed, required)
    return rules


def test_the_top_level_keys_are_the_same():
    assert set(SCHEMA["properties"]) == set(rubric.TOP_KEYS)
    assert SCHEMA["required"] == ["criteria"]


def test_the_kinds_are_the_same():
    assert CRITERION["properties"]["kind"]["enum"] == list(rubric.KINDS)
    assert set(CRITERION["required"]) == {"id", "kind", "weight"}
    assert set(rubric.COMMON_KEYS) | {k for keys in rubric.KIND_KEYS.values() for k in keys} \
        == set(CRITERION["properties"])


@pytest.mark.parametrize("kind", rubric.KINDS)
def test_each_kind_allows_and_requires_the_same_keys(kind):
    allowed, required = _kind_rules()[kind]
    assert allowed == set(rubric.COMMON_KEYS) | set(rubric.KIND_KEYS[kind])
    assert required == set(rubric.REQUIRED_KIND_KEYS.get(kind, ()))


def test_the_test_groups_and_the_id_pattern_are_the_same():
    tests = CRITERION["properties"]["tests"]["oneOf"][1]["enum"]
    assert tests == list(rubric.TEST_GROUP_NAMES)
    assert CRITERION["properties"]["id"]["pattern"] == rubric.ID_RE.pattern
