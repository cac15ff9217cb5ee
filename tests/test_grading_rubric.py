"""The rubric loader: what it builds, and each rejection with a one-line error naming the file and
the field (pure, then through the CLI)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import yaml

from ci_eval.errors import UserError
from ci_eval.grading.rubric import parse_rubric, task_grading
from ci_eval.grading.rubric import tests_from_metadata as declared_in_metadata

F2P = ["tests/test_a.py::test_bug"]
P2P = ["tests/test_a.py::test_ok", "tests/test_a.py::test_other"]


def rubric_doc(**overrides) -> dict:
    doc = {
        "fail_to_pass": list(F2P),
        "pass_to_pass": list(P2P),
        "pass_threshold": 80,
        "auto_fail": ["no-test-edits"],
        "criteria": [
            {"id": "fixes", "kind": "tests", "tests": list(F2P), "weight": 5, "rationale": "r"},
            {"id": "keeps", "kind": "tests", "tests": "pass_to_pass", "weight": 2,
             "rationale": "r"},
            {"id": "no-test-edits", "kind": "forbidden_paths", "paths": ["tests/**"],
             "weight": 2, "rationale": "r"},
            {"id": "no-abs", "kind": "forbidden_pattern", "pattern": r"\babs\(", "weight": 1.5,
             "rationale": "r"},
            {"id": "review", "kind": "manual", "weight": 1},
        ],
    }
    doc.update(overrides)
    return doc


def parse(doc, metadata_tests=None):
    return parse_rubric(yaml.safe_dump(doc, sort_keys=False), source="t/rubric.yaml",
                        metadata_tests=metadata_tests)


def test_a_valid_rubric_loads_with_groups_resolved_and_exact_weights():
    rubric = parse(rubric_doc())
    assert rubric.tests.fail_to_pass == tuple(F2P) and rubric.tests.pass_to_pass == tuple(P2P)
    keeps = rubric.criteria[1]
    assert keeps.tests == tuple(P2P)
    assert rubric.criteria[3].weight == Fraction(3, 2)
    assert rubric.total_weight == Fraction(21, 2)  # the manual criterion is outside
    assert rubric.pass_threshold == 80 and rubric.auto_fail == ("no-test-edits",)
    assert [c.automated for c in rubric.criteria] == [True, True, True, True, False]


def test_tests_may_come_from_metadata_json():
    tests = declared_in_metadata({"fail_to_pass": F2P, "pass_to_pass": P2P}, "t/metadata.json")
    doc = rubric_doc()
    del doc["fail_to_pass"], doc["pass_to_pass"]
    rubric = parse(doc, tests)
    assert rubric.tests == tests


def test_pass_threshold_defaults_to_100():
    doc = rubric_doc()
    del doc["pass_threshold"]
    assert parse(doc).pass_threshold == 100


def without(doc: dict, key: str) -> dict:
    doc = dict(doc)
    del doc[key]
    return doc


def criteria_with(index: int, **changes) -> list:
    criteria = [dict(c) for c in rubric_doc()["criteria"]]
    for key, value in changes.items():
        if value is None:
            criteria[index].pop(key, None)
        else:
            criteria[index][key] = value
    return criteria


# The rejections the issue lists, one by one, each naming its field.
REJECTIONS = {
    "empty fail_to_pass": (rubric_doc(fail_to_pass=[]), "$.fail_to_pass",
                           "expected at least one test id"),
    "a test in both groups": (rubric_doc(pass_to_pass=[P2P[0], F2P[0]]), "$.pass_to_pass[1]",
                              "is also in fail_to_pass"),
    "a duplicate within a group": (rubric_doc(pass_to_pass=[P2P[0], P2P[1], P2P[0]]),
                                   "$.pass_to_pass[2]", "is listed twice"),
    "a criterion naming an undeclared test": (
        rubric_doc(criteria=criteria_with(0, tests=["tests/test_a.py::test_nope"])),
        "$.criteria[0].tests[0]", "is not a test the task declares"),
    "a zero weight": (rubric_doc(criteria=criteria_with(2, weight=0)), "$.criteria[2].weight",
                      "expected a positive number, got 0"),
    "a negative weight": (rubric_doc(criteria=criteria_with(1, weight=-2)),
                          "$.criteria[1].weight", "expected a positive number"),
    "a weight that is not a number": (rubric_doc(criteria=criteria_with(1, weight="heavy")),
                                      "$.criteria[1].weight", "expected a positive number"),
    "an automated criterion without a rationale": (
        rubric_doc(criteria=criteria_with(3, rationale=None)), "$.criteria[3].rationale",
        "required for an automated criterion"),
    "a blank rationale": (rubric_doc(criteria=criteria_with(3, rationale="   ")),
                          "$.criteria[3].rationale", "required for an automated criterion"),
    "an auto_fail id that is no criterion": (rubric_doc(auto_fail=["no-test-edits", "nope"]),
                                             "$.auto_fail[1]", "'nope' is no criterion"),
    "an auto_fail on a manual criterion": (rubric_doc(auto_fail=["review"]), "$.auto_fail[0]",
                                           "manual criterion"),
    "two criteria with one id": (rubric_doc(criteria=criteria_with(1, id="fixes")),
                                 "$.criteria[1].id", "is also the id of $.criteria[0]"),
    "an unknown kind": (rubric_doc(criteria=criteria_with(1, kind="vibes")),
                        "$.criteria[1].kind", "expected one of tests, forbidden_paths"),
    "a field another kind has": (rubric_doc(criteria=criteria_with(2, pattern="x")),
                                 "$.criteria[2].pattern", "unknown field for kind forbidden_paths"),
    "a regex that does not compile": (rubric_doc(criteria=criteria_with(3, pattern="abs(")),
                                      "$.criteria[3].pattern", "not a valid regular expression"),
    "a missing kind field": (rubric_doc(criteria=criteria_with(2, paths=None)),
                             "$.criteria[2].paths", "required field is missing"),
    "only manual criteria": (rubric_doc(auto_fail=[], criteria=[rubric_doc()["criteria"][4]]),
                             "$.criteria", "at least one automated criterion"),
    "a threshold above 100": (rubric_doc(pass_threshold=101), "$.pass_threshold",
                              "expected a number 0-100"),
    "an unknown top-level key": (rubric_doc(threshold=80), "$.threshold", "unknown field"),
    "a group the task does not declare": (
        rubric_doc(pass_to_pass=[], criteria=criteria_with(1, tests="pass_to_pass")),
        "$.criteria[1].tests", "declares no pass_to_pass tests"),
}


@pytest.mark.parametrize("case", REJECTIONS, ids=list(REJECTIONS))
def test_each_rejection_names_the_file_and_the_field(case):
    doc, field, needle = REJECTIONS[case]
    with pytest.raises(UserError) as caught:
        parse(doc)
    message = str(caught.value)
    assert message.startswith(f"t/rubric.yaml: {field}: "), message
    assert needle in message and "\n" not in message


def max_files(value) -> dict:
    return {"id": "small", "kind": "max_files_changed", "max": value, "weight": 1,
            "rationale": "r"}


# Rejections of a criterion's own fields, beyond the list (and beyond what the schema
# words the same way).
FIELD_REJECTIONS = {
    "a criterion that is no mapping": (rubric_doc(criteria=[*rubric_doc()["criteria"], "fixes"]),
                                       "$.criteria[5]", "expected a mapping (id, kind, weight"),
    "a criterion without an id": (rubric_doc(criteria=criteria_with(0, id=None)),
                                  "$.criteria[0].id", "required field is missing"),
    "an id with a space": (rubric_doc(criteria=criteria_with(0, id="has space")),
                           "$.criteria[0].id", "expected an id of letters, digits"),
    "a rationale that is no text": (rubric_doc(criteria=criteria_with(0, rationale=5)),
                                    "$.criteria[0].rationale", "expected text, got"),
    "a description that is no text": (rubric_doc(criteria=criteria_with(4, description=[1])),
                                      "$.criteria[4].description", "expected text, got"),
    "a negative max": (rubric_doc(criteria=[*rubric_doc()["criteria"], max_files(-1)]),
                       "$.criteria[5].max", "expected a whole number >= 0, got -1"),
    "a max that is true": (rubric_doc(criteria=[*rubric_doc()["criteria"], max_files(True)]),
                           "$.criteria[5].max", "expected a whole number >= 0"),
    "an unknown test group": (rubric_doc(criteria=criteria_with(1, tests="everything")),
                              "$.criteria[1].tests", "expected a list of test ids or one of"),
    "an empty list of tests": (rubric_doc(criteria=criteria_with(0, tests=[])),
                               "$.criteria[0].tests", "expected a non-empty list of test ids"),
    "a test named twice by a criterion": (
        rubric_doc(criteria=criteria_with(0, tests=[F2P[0], F2P[0]])), "$.criteria[0].tests[1]",
        "is listed twice"),
}


@pytest.mark.parametrize("case", FIELD_REJECTIONS, ids=list(FIELD_REJECTIONS))
def test_each_field_rejection_names_the_file_and_the_field(case):
    doc, field, needle = FIELD_REJECTIONS[case]
    with pytest.raises(UserError) as caught:
        parse(doc)
    assert caught.value.path == "t/rubric.yaml" and caught.value.field == field
    assert needle in caught.value.message


def test_a_criterion_keeps_its_texts_and_a_max_of_zero():
    criteria = [*criteria_with(4, description="  look   at\nthe diff "), max_files(0)]
    rubric = parse(rubric_doc(criteria=criteria))
    assert rubric.criteria[0].rationale == "r"
    assert rubric.criteria[4].description == "look at the diff"
    assert rubric.criteria[5].max == 0 and rubric.criteria[5].kind == "max_files_changed"


def test_tests_declared_in_both_files_are_rejected():
    tests = declared_in_metadata({"fail_to_pass": F2P}, "t/metadata.json")
    with pytest.raises(UserError, match=r"^t/rubric.yaml: \$.fail_to_pass: tests are declared in "
                                        r"t/metadata.json too"):
        parse(rubric_doc(), tests)


@pytest.mark.parametrize("metadata, field, needle", [
    ({"fail_to_pass": []}, "$.fail_to_pass", "expected at least one test id"),
    ({"pass_to_pass": P2P}, "$.fail_to_pass", "expected at least one test id"),
    ({"fail_to_pass": F2P, "pass_to_pass": F2P}, "$.pass_to_pass[0]", "also in fail_to_pass"),
    ({"fail_to_pass": F2P + F2P}, "$.fail_to_pass[1]", "is listed twice"),
])
def test_metadata_declared_tests_are_checked_the_same_way(metadata, field, needle):
    with pytest.raises(UserError) as caught:
        task_grading(metadata, None, metadata_source="t/metadata.json",
                     rubric_source="t/rubric.yaml")
    assert str(caught.value).startswith(f"t/metadata.json: {field}: ") and needle in str(
        caught.value)


def test_yaml_problems_name_the_line():
    with pytest.raises(UserError, match=r"^t/rubric.yaml: line 2: duplicate key 'criteria'"):
        parse_rubric("criteria: []\ncriteria: []\n", source="t/rubric.yaml")


# --- through the CLI: the commands that load tasks refuse a broken rubric with exit 2 ---------


@pytest.fixture
def rubric_task(repo_root, make_task):
    def build(doc, metadata=None):
        task = make_task(repo_root, "task-001-demo", metadata=metadata or {})
        (task / "rubric.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        return task
    return build


@pytest.mark.parametrize("case", ["empty fail_to_pass", "a test in both groups",
                                  "a duplicate within a group",
                                  "a criterion naming an undeclared test", "a zero weight",
                                  "an automated criterion without a rationale",
                                  "an auto_fail id that is no criterion"])
def test_verify_run_and_grade_refuse_a_broken_rubric_naming_file_and_field(
        case, rubric_task, repo_root, main_cli, assert_bad_input, tmp_path):
    doc, field, needle = REJECTIONS[case]
    rubric = rubric_task(doc) / "rubric.yaml"
    assert_bad_input(main_cli("verify", "--root", repo_root), f"{rubric}: {field}: ", needle)
    patch = tmp_path / "x.patch"
    patch.write_text("")
    assert_bad_input(main_cli("grade", "--root", repo_root, "1", "--patch", patch),
                     f"{rubric}: {field}: ", needle)
    assert_bad_input(main_cli("run", "--root", repo_root, "--agent", "noop", "-k", "1",
                              "--out", tmp_path / "out"), f"{rubric}: {field}: ", needle)
    assert not list((tmp_path / "out").glob("*.jsonl")) if (tmp_path / "out").exists() else True


def test_tests_in_both_files_are_refused_by_the_cli(rubric_task, repo_root, main_cli,
                                                     assert_bad_input):
    task = rubric_task(rubric_doc(), metadata={"fail_to_pass": F2P})
    assert_bad_input(main_cli("verify", "--root", repo_root),
                     f"{task / 'rubric.yaml'}: $.fail_to_pass: tests are declared in "
                     f"{task / 'metadata.json'} too")


def test_validate_reports_a_rubric_problem_with_file_and_field(rubric_task, repo_root, main_cli):
    rubric_task(rubric_doc(criteria=criteria_with(2, weight=0)))
    result = main_cli("validate", "--root", repo_root)
    assert result.returncode == 2
    assert "rubric.yaml: $.criteria[2].weight: expected a positive number, got 0" in result.stderr


def test_validate_accepts_a_good_rubric_and_metadata_tests(rubric_task, repo_root, main_cli):
    rubric_task(without(without(rubric_doc(), "fail_to_pass"), "pass_to_pass"),
                metadata={"fail_to_pass": F2P, "pass_to_pass": P2P})
    result = main_cli("validate", "--root", repo_root)
    assert result.returncode == 0, result.stderr


def test_the_metadata_schema_knows_the_test_groups(repo_root, make_task, main_cli):
    make_task(repo_root, "task-001-demo", metadata={"fail_to_pass": "tests/x.py::t"})
    result = main_cli("validate", "--root", repo_root)
    assert result.returncode == 2 and "$.fail_to_pass" in result.stderr


def test_schema_rubric_is_printable_and_accepts_the_shipped_rubric(main_cli):
    from pathlib import Path

    import jsonschema

    result = main_cli("schema", "rubric")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    shipped = Path(__file__).resolve().parents[1] / "tasks"
    for rubric in shipped.glob("*/rubric.yaml"):
        jsonschema.validate(yaml.safe_load(rubric.read_text()), schema)


@pytest.mark.parametrize("case", [c for c in REJECTIONS if c not in (
    # what only the loader can see: references across fields, and Python regexes
    "a test in both groups", "a criterion naming an undeclared test",
    "an auto_fail id that is no criterion", "an auto_fail on a manual criterion",
    "two criteria with one id", "a regex that does not compile", "only manual criteria",
    "a group the task does not declare", "a blank rationale")])
def test_the_schema_rejects_what_the_loader_rejects_where_a_schema_can(case, main_cli):
    import jsonschema

    schema = json.loads(main_cli("schema", "rubric").stdout)
    doc = REJECTIONS[case][0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(json.dumps(doc)), schema)
    jsonschema.validate(json.loads(json.dumps(rubric_doc())), schema)
