"""The rubric model and its loader: rubric.yaml text (and the tests metadata.json declares) ->
Rubric, or UserError naming the file and the field. Pure: the caller reads the files.

    rubric = parse_rubric(text, source="tasks/task-021-x/rubric.yaml",
                          metadata_tests=tests_from_metadata(metadata, "…/metadata.json"))

rubric.yaml (`ci-eval schema rubric` is the same contract as a JSON Schema, for editors;
tests/test_rubric_contract.py holds its keys and kinds equal to this module's tables):

    fail_to_pass: [tests/test_x.py::test_bug]      # optional here: or in metadata.json, not both
    pass_to_pass: [tests/test_x.py::test_other]
    pass_threshold: 80                             # 0-100, default 100
    auto_fail: [no-test-tampering]                 # criteria that force FAIL whatever the score
    criteria:
      - id: fixes-the-bug
        kind: tests                                # tests: a list of declared ids, or
        tests: [tests/test_x.py::test_bug]         #   fail_to_pass / pass_to_pass / all
        weight: 5
        description: The reported bug is fixed     # shown in tables (default: the id)
        rationale: the behaviour the report asks for
      - {id: no-test-tampering, kind: forbidden_paths, paths: ["tests/**"], weight: 2, rationale: …}
      - {id: no-abs, kind: forbidden_pattern, pattern: '\\babs\\(', paths: ["src/**"], …}
      - {id: keeps-lock, kind: required_pattern, pattern: 'with self\\._lock', …}
      - {id: small, kind: max_files_changed, max: 2, …}     # also max_lines_changed (added+removed)
      - {id: readable, kind: manual, weight: 2}             # scored by a person, no rationale needed

What the loader rejects, each naming the field: an empty fail_to_pass; a test in both groups;
a test listed twice in a group; tests declared in both metadata.json and rubric.yaml; a
criterion naming a test that is not declared; a weight that is not a positive finite number; an
automated criterion without a rationale; an auto_fail id that is no criterion (or is a manual
one); two criteria with one id; no automated criterion at all; a regex that does not compile;
unknown keys; wrong types.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ci_eval.errors import UserError
from ci_eval.grading.testids import GROUPS, TestIds
from ci_eval.strict_json import json_path
from ci_eval.strict_yaml import parse_yaml

KINDS = ("tests", "forbidden_paths", "forbidden_pattern", "required_pattern",
         "max_files_changed", "max_lines_changed", "manual")
COMMON_KEYS = ("id", "kind", "weight", "rationale", "description")
KIND_KEYS = {
    "tests": ("tests",),
    "forbidden_paths": ("paths",),
    "forbidden_pattern": ("pattern", "paths"),
    "required_pattern": ("pattern", "paths"),
    "max_files_changed": ("max", "paths"),
    "max_lines_changed": ("max", "paths"),
    "manual": (),
}
REQUIRED_KIND_KEYS = {"tests": ("tests",), "forbidden_paths": ("paths",),
                      "forbidden_pattern": ("pattern",), "required_pattern": ("pattern",),
                      "max_files_changed": ("max",), "max_lines_changed": ("max",)}
TOP_KEYS = ("fail_to_pass", "pass_to_pass", "pass_threshold", "auto_fail", "criteria")
TEST_GROUP_NAMES = (*GROUPS, "all")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
DEFAULT_THRESHOLD = Fraction(100)
RUBRIC_FILE = "rubric.yaml"


@dataclass(frozen=True)
class Criterion:
    id: str
    kind: str
    weight: Fraction
    rationale: str = ""
    description: str = ""
    tests: tuple[str, ...] = ()  # kind tests: the declared ids it names (groups resolved)
    paths: tuple[str, ...] = ()  # globs: forbidden_paths; or the files a pattern / max counts
    pattern: str = ""
    max: int | None = None

    @property
    def automated(self) -> bool:
        return self.kind != "manual"

    @property
    def title(self) -> str:
        return self.description or self.id


@dataclass(frozen=True)
class Rubric:
    criteria: tuple[Criterion, ...]
    pass_threshold: Fraction = DEFAULT_THRESHOLD
    auto_fail: tuple[str, ...] = ()
    tests: TestIds | None = None  # the task's declared tests (from either file)
    source: str = ""

    @property
    def automated(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.automated)

    @property
    def total_weight(self) -> Fraction:
        return sum((c.weight for c in self.automated), Fraction(0))


def parse_rubric(text: str, *, source: str | Path,
                 metadata_tests: TestIds | None = None) -> Rubric:
    """rubric.yaml's text -> Rubric (UserError naming `source` and the field)."""
    return rubric_from_data(parse_yaml(text, source), source=source,
                            metadata_tests=metadata_tests)


def tests_from_metadata(metadata: Any, source: str | Path) -> TestIds | None:
    """The tests metadata.json declares (fail_to_pass / pass_to_pass), checked; None when it
    declares none. The schema checks the types; this checks what a schema cannot."""
    if not isinstance(metadata, dict) or not any(g in metadata for g in GROUPS):
        return None
    return _test_ids(metadata, source)


def rubric_from_data(data: Any, *, source: str | Path,
                     metadata_tests: TestIds | None = None) -> Rubric:
    source = str(source)
    if not isinstance(data, dict):
        raise _error(source, [], f"expected a mapping with criteria, got {_kind_of(data)}")
    for key in data:
        if key not in TOP_KEYS and not str(key).startswith("x-"):
            raise _error(source, [key], f"unknown field (known: {', '.join(TOP_KEYS)})")
    declared = metadata_tests
    if any(group in data for group in GROUPS):
        if metadata_tests is not None:
            group = next(g for g in GROUPS if g in data)
            raise _error(source, [group], f"tests are declared in {metadata_tests.source} "
                         "too; declare fail_to_pass / pass_to_pass in one place")
        declared = _test_ids(data, source)
    criteria = _criteria(data, source, declared)
    threshold = DEFAULT_THRESHOLD
    if "pass_threshold" in data:
        threshold = _number(data["pass_threshold"], source, ["pass_threshold"],
                            "a number 0-100", low=0, high=100)
    auto_fail = _auto_fail(data, source, criteria)
    return Rubric(criteria, threshold, auto_fail, declared, source)


# --- parts ------------------------------------------------------------------------------------


def _test_ids(data: dict, source: str | Path) -> TestIds:
    groups = {}
    for group in GROUPS:
        value = data.get(group, [])
        if not isinstance(value, list) or not all(isinstance(t, str) and t.strip()
                                                  for t in value):
            raise _error(source, [group], f"expected a list of test ids (pytest node ids), got "
                         f"{_kind_of(value)}")
        seen: dict[str, int] = {}
        for index, test_id in enumerate(value):
            if test_id in seen:
                raise _error(source, [group, index], f"{test_id!r} is listed twice (also at "
                             f"{json_path([group, seen[test_id]])})")
            seen[test_id] = index
        groups[group] = tuple(value)
    if not groups["fail_to_pass"]:
        raise _error(source, ["fail_to_pass"], "expected at least one test id (a task proves "
                     "its bug with a test that fails before the fix and passes after it)")
    for index, test_id in enumerate(groups["pass_to_pass"]):
        if test_id in groups["fail_to_pass"]:
            raise _error(source, ["pass_to_pass", index], f"{test_id!r} is also in "
                         "fail_to_pass (a test is in one group)")
    return TestIds(groups["fail_to_pass"], groups["pass_to_pass"], str(source))


def _criteria(data: dict, source: str, declared: TestIds | None) -> tuple[Criterion, ...]:
    items = data.get("criteria")
    if not isinstance(items, list) or not items:
        raise _error(source, ["criteria"], f"expected a non-empty list of criteria, got "
                     f"{_kind_of(items) if 'criteria' in data else 'nothing'}")
    criteria: list[Criterion] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(items):
        criterion = _criterion(item, source, ["criteria", index], declared)
        if criterion.id in first_index:
            raise _error(source, ["criteria", index, "id"], f"{criterion.id!r} is also the id "
                         f"of {json_path(['criteria', first_index[criterion.id]])}")
        first_index[criterion.id] = index
        criteria.append(criterion)
    if not any(c.automated for c in criteria):
        raise _error(source, ["criteria"], "expected at least one automated criterion (manual "
                     "ones are outside the score)")
    return tuple(criteria)


def _criterion(item: Any, source: str, where: list, declared: TestIds | None) -> Criterion:
    if not isinstance(item, dict):
        raise _error(source, where, f"expected a mapping (id, kind, weight, ...), got "
                     f"{_kind_of(item)}")
    for key in ("id", "kind", "weight"):
        if key not in item:
            raise _error(source, [*where, key], "required field is missing")
    ident = item["id"]
    if not isinstance(ident, str) or not ID_RE.match(ident):
        raise _error(source, [*where, "id"], f"expected an id of letters, digits, '-', '_' "
                     f"or '.', got {_shown(ident)}")
    kind = item["kind"]
    if kind not in KINDS:
        raise _error(source, [*where, "kind"], f"expected one of {', '.join(KINDS)}, got "
                     f"{_shown(kind)}")
    known = COMMON_KEYS + KIND_KEYS[kind]
    for key in item:
        if key not in known:
            raise _error(source, [*where, key], f"unknown field for kind {kind} (known: "
                         f"{', '.join(known)})")
    for key in REQUIRED_KIND_KEYS.get(kind, ()):
        if key not in item:
            raise _error(source, [*where, key], f"required field is missing for kind {kind}")
    weight = _number(item["weight"], source, [*where, "weight"], "a positive number",
                     low=0, exclusive=True)
    texts = {}
    for key in ("rationale", "description"):
        value = item.get(key, "")
        if not isinstance(value, str):
            raise _error(source, [*where, key], f"expected text, got {_kind_of(value)}")
        texts[key] = " ".join(value.split())
    if kind != "manual" and not texts["rationale"]:
        raise _error(source, [*where, "rationale"], "required for an automated criterion "
                     "(say what it catches that the other criteria do not)")
    fields: dict[str, Any] = {}
    if "paths" in item:
        fields["paths"] = _globs(item["paths"], source, [*where, "paths"])
    if "pattern" in item:
        fields["pattern"] = _regex(item["pattern"], source, [*where, "pattern"])
    if "max" in item:
        value = item["max"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _error(source, [*where, "max"], f"expected a whole number >= 0, got "
                         f"{_shown(value)}")
        fields["max"] = value
    if kind == "tests":
        fields["tests"] = _criterion_tests(item["tests"], source, [*where, "tests"], declared)
    return Criterion(ident, kind, weight, texts["rationale"], texts["description"], **fields)


def _criterion_tests(value: Any, source: str, where: list,
                     declared: TestIds | None) -> tuple[str, ...]:
    hint = "fail_to_pass / pass_to_pass in metadata.json or rubric.yaml"
    if isinstance(value, str):
        if value not in TEST_GROUP_NAMES:
            raise _error(source, where, f"expected a list of test ids or one of "
                         f"{', '.join(TEST_GROUP_NAMES)}, got {_shown(value)}")
        if declared is None:
            raise _error(source, where, f"names the group {value}, but the task declares no "
                         f"tests ({hint})")
        chosen = {"fail_to_pass": declared.fail_to_pass, "pass_to_pass": declared.pass_to_pass,
                  "all": declared.all}[value]
        if not chosen:
            raise _error(source, where, f"the task declares no {value} tests")
        return chosen
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise _error(source, where, f"expected a non-empty list of test ids, got "
                     f"{_kind_of(value)}")
    for index, test_id in enumerate(value):
        if declared is None or declared.group_of(test_id) is None:
            raise _error(source, [*where, index], f"{test_id!r} is not a test the task "
                         f"declares ({hint})")
        if test_id in value[:index]:
            raise _error(source, [*where, index], f"{test_id!r} is listed twice")
    return tuple(value)


def _auto_fail(data: dict, source: str, criteria: tuple[Criterion, ...]) -> tuple[str, ...]:
    value = data.get("auto_fail", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _error(source, ["auto_fail"], f"expected a list of criterion ids, got "
                     f"{_kind_of(value)}")
    by_id = {c.id: c for c in criteria}
    for index, ident in enumerate(value):
        if ident not in by_id:
            raise _error(source, ["auto_fail", index], f"{ident!r} is no criterion (known: "
                         f"{', '.join(by_id)})")
        if not by_id[ident].automated:
            raise _error(source, ["auto_fail", index], f"{ident!r} is a manual criterion; "
                         "only automated criteria can force a FAIL")
    return tuple(dict.fromkeys(value))


def _globs(value: Any, source: str, where: list) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise _error(source, where, f"expected a non-empty list of path globs (e.g. tests/**), "
                     f"got {_kind_of(value)}")
    return tuple(value)


def _regex(value: Any, source: str, where: list) -> str:
    if not isinstance(value, str) or not value:
        raise _error(source, where, f"expected a regular expression, got {_kind_of(value)}")
    try:
        re.compile(value)
    except re.error as exc:
        raise _error(source, where, f"not a valid regular expression: {exc}") from None
    return value


def _number(value: Any, source: str, where: list, expected: str, *, low: float | None = None,
            high: float | None = None, exclusive: bool = False) -> Fraction:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if exclusive else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        raise _error(source, where, f"expected {expected}, got {_shown(value)}")
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def _error(source: str | Path, parts: list, message: str) -> UserError:
    return UserError(message, path=source, field=json_path(parts))


def _kind_of(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f"{'a mapping' if isinstance(value, dict) else 'a list'} {_shown(value)}"
    return _shown(value)


def _shown(value: Any) -> str:
    text = "null" if value is None else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:59] + "…"


def task_grading(metadata: Any, rubric_text: str | None, *, metadata_source: str | Path,
                 rubric_source: str | Path) -> tuple[TestIds | None, Rubric | None]:
    """A task's declared tests and rubric from its metadata (parsed) and rubric.yaml's text
    (None: no rubric.yaml). UserError for either file's first problem."""
    tests = tests_from_metadata(metadata, metadata_source)
    if rubric_text is None:
        return tests, None
    rubric = parse_rubric(rubric_text, source=rubric_source, metadata_tests=tests)
    return rubric.tests, rubric
