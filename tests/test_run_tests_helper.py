"""ci_eval.checks.run_tests: what it restores, and how it cross-checks pytest's exit code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ci_eval.checks import restore_pristine, run_pytest, run_tests

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A task folder (repo-state with the real test) and a workspace the agent changed."""
    task = tmp_path / "task"
    (task / "repo-state" / "tests").mkdir(parents=True)
    (task / "repo-state" / "calc.py").write_text(BUGGY)
    (task / "repo-state" / "tests" / "test_calc.py").write_text(TEST)
    workspace = tmp_path / "ws"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "calc.py").write_text(BUGGY)
    monkeypatch.setenv("CI_EVAL_TASK_DIR", str(task))
    monkeypatch.setenv("CI_EVAL_REPORT_DIR", str(tmp_path / "reports"))
    (tmp_path / "reports").mkdir()
    monkeypatch.chdir(workspace)
    return workspace


def test_a_weakened_test_is_put_back_before_running(project):
    (project / "tests" / "test_calc.py").write_text(
        "def test_add():\n    assert True  # the agent's edit\n")
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_add"],
                       restore=["tests/test_calc.py"])
    assert not result.ok, result.reason
    assert "tests/test_calc.py::test_add FAILED" in result.reason
    assert (project / "tests" / "test_calc.py").read_text() == TEST


def test_a_test_the_agent_deleted_is_put_back(project):
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_add"],
                       restore=["tests/test_calc.py"])
    assert not result.ok and "FAILED" in result.reason, result.reason


def test_restore_does_not_write_through_a_symlinked_folder(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "tests").rmdir()
    (project / "tests").symlink_to(outside)
    run_tests(fail_to_pass=["tests/test_calc.py::test_add"], restore=["tests/test_calc.py"])
    assert list(outside.iterdir()) == []
    assert (project / "tests").is_dir() and not (project / "tests").is_symlink()


def test_named_tests_passing_while_pytest_fails_is_a_fail(project):
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "tests" / "test_calc.py").write_text(TEST + "\ndef test_other():\n    assert 0\n")
    result = run_tests(pass_to_pass=["tests/test_calc.py::test_add"],
                       args=["tests/test_calc.py::test_other"])
    assert not result.ok
    assert "pytest exited 1 although the named tests passed" in result.reason


def test_an_exit_code_forged_after_the_report_is_a_fail(project):
    """Code under test that replaces pytest's exit code (os._exit from an atexit hook) is caught
    by comparing the process's exit code with the status the report recorded."""
    (project / "calc.py").write_text(
        "import atexit, os\natexit.register(lambda: os._exit(0))\n" + BUGGY)
    (project / "tests" / "test_calc.py").write_text(TEST)
    run = run_pytest(["tests/test_calc.py"])
    assert run.outcomes is None
    assert "pytest exited 0 but its report says 1" in run.problem
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_add"],
                       restore=["tests/test_calc.py"])
    assert not result.ok and "but its report says 1" in result.reason


def test_printed_passes_without_a_report_are_no_evidence(project):
    """The classic forgery: print PASSED for every id, then leave before pytest reports."""
    (project / "calc.py").write_text(
        "import os, sys\nprint('PASSED tests/test_calc.py::test_add', flush=True)\nos._exit(0)\n")
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_add"],
                       restore=["tests/test_calc.py"])
    assert not result.ok
    assert "no evidence the tests ran" in result.reason


def test_a_skipped_or_errored_fail_to_pass_test_fails(project):
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "tests" / "test_calc.py").write_text(
        "import pytest\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n"
        "@pytest.mark.skip\ndef test_skipped():\n    pass\n"
        "def test_error(broken):\n    pass\n")
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_skipped",
                                     "tests/test_calc.py::test_error"])
    assert not result.ok
    assert "test_skipped SKIPPED (fail_to_pass)" in result.reason
    assert "test_error ERROR (fail_to_pass)" in result.reason


def test_project_config_uses_the_pristine_ini_not_the_agents(project, tmp_path):
    """A workspace pytest.ini that loads a workspace plugin (which makes every test pass) is
    ignored: with project_config=True the ini is repo-state's."""
    task = Path(tmp_path / "task" / "repo-state")
    (task / "pytest.ini").write_text("[pytest]\n")
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p allpass\n")
    (project / "allpass.py").write_text(
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n")
    result = run_tests(fail_to_pass=["tests/test_calc.py::test_add"],
                       restore=["tests/test_calc.py"], project_config=True)
    assert not result.ok and "FAILED" in result.reason, result.reason


def test_project_config_on_a_pinned_task_names_its_folder(project, tmp_path):
    """A task pinned to an upstream commit has no repo-state/: project_config=True is a failed
    check saying so (it crashed), and project_config="FOLDER" takes the pristine conftest.py
    from that folder of the task, never the agent's."""
    import shutil

    task = tmp_path / "task"
    shutil.move(task / "repo-state", task / "test-files")
    (task / "test-files" / "tests" / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n")
    (project / "tests" / "test_calc.py").write_text(
        "from calc import add\n\ndef test_two(two):\n    assert add(two, two) == 4\n")
    (project / "tests" / "conftest.py").write_text(  # the agent's: add(0, 0) == 0 passes
        "import pytest\n\n@pytest.fixture\ndef two():\n    return 0\n")
    wanted = ["tests/test_calc.py::test_two"]
    crashed = run_tests(fail_to_pass=wanted, project_config=True)
    assert not crashed.ok and "no repo-state/" in crashed.reason, crashed.reason
    judged = run_tests(fail_to_pass=wanted, project_config="test-files")
    assert not judged.ok and "FAILED" in judged.reason, judged.reason
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert run_tests(fail_to_pass=wanted, project_config="test-files").ok


# --- the tamper sentinel leaves an honest session as pytest reports it ---------------------------

COLLECTION_ERROR = "from calc import missing\n\ndef test_x():\n    pass\n"


@pytest.mark.parametrize("args, extra, code, outcomes", [
    (["tests/test_calc.py"], {}, 1, {"tests/test_calc.py::test_add": "FAILED",
                                     "tests/test_calc.py::test_ok": "PASSED"}),
    (["tests/test_calc.py::test_ok", "-x"], {}, 0, {"tests/test_calc.py::test_ok": "PASSED"}),
    (["tests/test_calc.py", "-x"], {}, 1, {"tests/test_calc.py::test_add": "FAILED"}),
    (["-k", "nothing", "tests/test_calc.py"], {}, 5, {}),
    (["tests/test_calc.py", "tests/test_broken.py"], {"tests/test_broken.py": COLLECTION_ERROR},
     2, {"tests/test_broken.py": "ERROR"}),
    (["tests/missing.py"], {}, 4, {}),
], ids=["a-failure", "x-all-pass", "x-stops-on-a-failure", "none-collected",
        "collection-error", "usage-error"])
def test_the_sentinel_changes_neither_exit_code_nor_outcomes(project, args, extra, code,
                                                              outcomes):
    """Exit codes and outcomes as plain pytest gives them (-x, nothing collected, a collection
    error), with the two sentinel tests run and left out; the report on disk holds no sentinel."""
    (project / "tests" / "test_calc.py").write_text(TEST + "\ndef test_ok():\n    pass\n")
    for rel, text in extra.items():
        (project / rel).write_text(text)
    run = run_pytest(args)
    assert (run.exit_code, run.outcomes, run.problem) == (code, outcomes, ""), run.output
    reports = list(Path(os.environ["CI_EVAL_REPORT_DIR"]).iterdir())
    if code in (0, 1, 2, 5):
        assert "sentinel" in run.output or "::test_" in run.output
        assert json.loads(reports[0].read_text())["tests"] == outcomes


def test_a_forger_that_drops_the_must_fail_sentinel_is_caught(project):
    """Code under test that turns every failure into a pass, or that ends the session early."""
    (project / "tests" / "test_calc.py").write_text(TEST)
    (project / "calc.py").write_text(
        "import pytest\n"
        "def add(a, b):\n"
        "    pytest.exit('done', returncode=0)\n")
    run = run_pytest(["tests/test_calc.py"])
    assert run.outcomes is None
    assert run.problem.startswith("test outcomes were tampered with: ci-eval's sentinel tests "
                                  "are missing"), run.problem
    assert list(Path(os.environ["CI_EVAL_REPORT_DIR"]).iterdir()) == []  # withdrawn


# --- what would load instead of a restored file --------------------------------------------------

def test_restore_removes_what_python_would_load_instead(project, tmp_path):
    """Bytecode of the restored file (CPython's and pytest's), a package folder and an extension
    module of its name go; a package that repo-state has too, and other files, stay."""
    tests = project / "tests"
    (tests / "__pycache__").mkdir()
    for name in ("test_calc.cpython-311.pyc", "test_calc.cpython-311-pytest-9.0.3.pyc",
                 "other.cpython-311.pyc"):
        (tests / "__pycache__" / name).write_bytes(b"forged")
    (tests / "test_calc").mkdir()
    (tests / "test_calc" / "__init__.py").write_text("raise SystemExit(0)\n")
    (tests / "test_calc.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (tests / "test_calc.abi3.so").write_bytes(b"\x7fELF")
    (project / "calc").mkdir()
    (project / "calc" / "__init__.py").write_text("")
    pristine = tmp_path / "task" / "repo-state"
    (pristine / "calc").mkdir()
    (pristine / "calc" / "__init__.py").write_text("")
    restore_pristine(["tests/test_calc.py", "calc.py"])
    left = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    assert left == ["calc", "calc.py", "calc/__init__.py", "tests", "tests/__pycache__",
                    "tests/__pycache__/other.cpython-311.pyc", "tests/test_calc.py"], left


def test_a_test_whose_subtest_failed_is_failed_not_passed(project):
    # pytest 9 reports each subtest (unittest's subTest) before the test's own call report,
    # which passes: the test's outcome must stay FAILED (ci-eval generate found this on tomli)
    (project / "tests" / "test_sub.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
        "        for i in range(3):\n            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, 1)\n")
    run = run_pytest(["tests/test_sub.py"])
    assert run.outcomes == {"tests/test_sub.py::T::test_x": "FAILED"}, run
