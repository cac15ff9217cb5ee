"""`ci-eval import swe-bench FILE` (issue #25, item 4): instances of our own pointing at a local
bare repository, imported as tasks pinned to base_commit, which then verify."""

from __future__ import annotations

import json

from ci_eval.importers.base import file_patch
from tests.test_upstream_tasks import CALC, FIXED, upstream

NEW_TEST = "tests/test_calc_more.py"
# the test patch: a new test file and an edit to the existing one (the test SWE-bench checks)
TEST_PATCH = file_patch({"tests/test_calc.py": (
    b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    b"def test_zero():\n    assert add(0, 0) == 0\n")}, {
    "tests/test_calc.py": (b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5"
                           b"\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n\n\n"
                           b"def test_negative():\n    assert add(-1, -1) == -2\n"),
    NEW_TEST: b"from calc import add\n\n\ndef test_many():\n    assert add(add(1, 2), 3) == 6\n"})


def instance(url: str, base: str, **overrides) -> dict:
    data = {"instance_id": "calc__calc-1", "repo": url, "base_commit": base,
            "patch": file_patch({"calc.py": CALC.encode()}, {"calc.py": FIXED.encode()}),
            "test_patch": TEST_PATCH, "problem_statement": "add() subtracts its arguments.",
            "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_negative",
                                        f"{NEW_TEST}::test_many"]),
            "PASS_TO_PASS": ["tests/test_calc.py::test_zero"], "version": "1.0"}
    data.update(overrides)
    return data


def test_an_imported_instance_verifies(cli, repo_root, tmp_path):
    url, base, _ = upstream(tmp_path)
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(instance(url, base)) + "\n")
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    result = cli("import", "swe-bench", source, "--json", cwd=repo_root, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    [item] = report["imported"]
    assert item["task"] == "task-001-calc-calc-1"
    assert any("the environment: " in todo for todo in item["todo"])
    task = repo_root / "tasks" / item["task"]
    assert (task / "prompt.md").read_text() == "add() subtracts its arguments.\n"
    metadata = json.loads((task / "metadata.json").read_text())
    assert metadata["repo"] == {"url": url, "commit": base}
    assert not (task / "repo-state").exists()
    assert (task / "test-files" / NEW_TEST).is_file()
    # an agent that weakens the new test: the checks put the instance's test files back first
    (task / "negatives").mkdir()
    (task / "negatives" / "fix-and-weaken.sh").write_text(
        f"cat > calc.py <<'E'\ndef add(a, b):\n    return a + b if a >= 0 else 0\nE\n"
        f"echo 'def test_many(): pass' > {NEW_TEST}\n")
    verified = cli("verify", item["task"].split("-")[1], cwd=repo_root, env=env, timeout=240)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    rows = [line.split() for line in verified.stdout.splitlines()[2:5]]
    assert rows == [["FAIL", "PASS", "tests/test_calc.py::test_negative"],
                    ["FAIL", "PASS", f"{NEW_TEST}::test_many"],
                    ["PASS", "PASS", "tests/test_calc.py::test_zero"]]
    again = cli("import", "swe-bench", source, "--json", cwd=repo_root, env=env)
    assert json.loads(again.stdout)["skipped"] == [
        {"source_id": "calc__calc-1", "reason": f"already imported as {item['task']}"}]


def test_bad_instances_write_nothing(cli, repo_root, tmp_path):
    url, base, _ = upstream(tmp_path)
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    cases = [
        (instance(url, "f" * 40), f"line 1: calc__calc-1: calc__calc-1: cannot fetch commit {'f' * 40}"),
        (instance(url, base, test_patch=TEST_PATCH.replace("assert add(0, 0)", "assert zz")),
         "test_patch does not apply to the base commit"),
        ({"instance_id": "x"}, "line 1: repo: missing or not a string"),
        (instance(url, base, FAIL_TO_PASS="[1]"), "FAIL_TO_PASS: expected a list of test ids"),
    ]
    for number, (data, said) in enumerate(cases):
        source = tmp_path / f"bad-{number}.jsonl"
        source.write_text(json.dumps(data) + "\n")
        result = cli("import", "swe-bench", source, cwd=repo_root, env=env)
        assert result.returncode == 2, result.stdout + result.stderr
        assert said in result.stderr and "Traceback" not in result.stderr
        assert str(source) in result.stderr
        assert list((repo_root / "tasks").iterdir()) == []
