"""ci_eval.checks loads its parts when used: a checks run starts a fresh interpreter, so what a
checks.py imports before its own code is paid by every run (docs/perf-round3.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ci_eval.checks
from ci_eval import output
from ci_eval.run.checks import checks_program
from ci_eval.run.sandbox.launcher import checks_sys_path

REPO = Path(__file__).resolve().parents[1]
# what no checks.py that leaves pytest, JUnit and declared tests alone should pay for
HEAVY = {"dataclasses", "subprocess", "threading", "json", "typing", "inspect", "secrets",
         "tempfile", "shutil", "ctypes", "pathlib", "re", "enum",
         "ci_eval.grading.rubric", "ci_eval.grading.testids", "ci_eval.strict_json",
         "ci_eval.strict_yaml", "ci_eval.run.checks.strays", "ci_eval.run.checks.pytest_report",
         "ci_eval.run.checks.junit_report", "ci_eval.run.checks.restore"}


def modules_after(statement: str) -> set[str]:
    """The modules a fresh `python -I -S` holds after `statement` (as a checks run starts)."""
    code = (f"import sys\nsys.path.insert(0, {str(REPO)!r})\n{statement}\n"
            "import json\nprint(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                          text=True, check=True, cwd="/")
    before = set(json.loads(subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, cwd="/").stdout))
    return set(json.loads(done.stdout)) - before - {"json", "json.decoder", "json.scanner",
                                                    "json.encoder", "_json"}


@pytest.mark.parametrize("statement", [
    "import ci_eval.checks",
    "from ci_eval.checks import CheckResult, failed, main, passed",
    "from ci_eval.checks import file_equals, first_difference, regex_match",
])
def test_a_checks_py_that_runs_no_tests_imports_none_of_the_heavy_parts(statement):
    loaded = modules_after(statement)
    assert "ci_eval.checks" in loaded
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_the_verdict_helpers_load_neither_enum_nor_collections():
    loaded = modules_after("from ci_eval.checks import Check, CheckResult, failed, main, passed")
    assert not loaded & {"signal", "enum", "collections", "re", "pathlib"}, sorted(loaded)


def test_import_ci_eval_checks_alone_loads_no_helper_module():
    loaded = modules_after("import ci_eval.checks")
    assert not {m for m in loaded if m.startswith("ci_eval.checks.")}, sorted(loaded)


def test_every_public_name_resolves_to_the_helper_of_its_module():
    from ci_eval.checks import files, pytest_tests, result, task_folder

    for name in ci_eval.checks.__all__:
        assert getattr(ci_eval.checks, name) is not None, name
    assert ci_eval.checks.run_tests is pytest_tests.run_tests
    assert ci_eval.checks.main is result.main
    assert ci_eval.checks.file_equals is files.file_equals
    assert ci_eval.checks.task_dir is task_folder.task_dir
    assert set(ci_eval.checks.__all__) <= set(dir(ci_eval.checks))


def test_star_import_gives_every_public_name():
    names: dict = {}
    exec("from ci_eval.checks import *", names)  # noqa: S102 - what a checks.py may write
    assert set(ci_eval.checks.__all__) <= set(names)


def test_an_unknown_name_is_an_attribute_error_as_for_any_module():
    with pytest.raises(AttributeError, match="has no attribute 'run_everything'"):
        ci_eval.checks.run_everything  # noqa: B018
    with pytest.raises(ImportError):
        exec("from ci_eval.checks import run_everything", {})  # noqa: S102


def test_check_result_keeps_the_frozen_dataclass_behaviour():
    result = ci_eval.checks.CheckResult(True, "ok")
    assert result == ci_eval.checks.passed() and hash(result) == hash(ci_eval.checks.passed())
    assert result != ci_eval.checks.CheckResult(False, "ok")
    assert repr(ci_eval.checks.failed("no")) == "CheckResult(ok=False, reason='no')"
    assert ci_eval.checks.CheckResult(ok=False, reason="x").reason == "x"
    assert not ci_eval.checks.failed("no") and ci_eval.checks.passed()
    with pytest.raises(AttributeError):
        result.ok = False
    with pytest.raises(AttributeError):
        del result.reason
    match result:
        case ci_eval.checks.CheckResult(True, reason):
            assert reason == "ok"
        case _:
            pytest.fail("CheckResult does not match positionally")


def test_the_checks_programs_guard_sets_both_flags_without_ctypes():
    """checks_program makes itself non-dumpable and a child subreaper through _ctypes alone."""
    guard = (f"sys.path.insert(0, {str(REPO / 'ci_eval' / 'run' / 'checks')!r})\n"
             "import checks_program\nchecks_program._guard_process()")
    assert "ctypes" not in modules_after(guard)
    read_back = ("import ctypes\nlibc = ctypes.CDLL(None)\nflag = ctypes.c_int(0)\n"
                 "libc.prctl(37, ctypes.byref(flag), 0, 0, 0)\n"  # PR_GET_CHILD_SUBREAPER
                 "print(libc.prctl(3, 0, 0, 0, 0), flag.value)")  # PR_GET_DUMPABLE
    done = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys\n{guard}\n{read_back}"],
                          capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.split() == ["0", "1"]


@given(st.lists(st.sampled_from(["a", "b.txt", ".", "..", "", "x y"]), max_size=6),
       st.booleans())
def test_paths_are_shown_and_named_as_pathlib_does(parts, absolute):
    text = ("/" if absolute else "") + "/".join(parts)
    if not text or text.startswith("//"):
        return  # "" is no path; pathlib keeps a leading "//" (POSIX leaves it to the system)
    assert output.shown(text) == str(PurePosixPath(text))
    assert output.file_name(text) == PurePosixPath(text).name


def _run_checks_program(tmp_path: Path, sys_path: list[str], extra_args: tuple[str, ...] = ()):
    """checks_program.command as the harness starts it (no sandbox), on a checks.py that passes;
    (the verdict word, stderr)."""
    checks = tmp_path / "checks.py"
    checks.write_text("import sys\nsys.exit(0)\n")
    read, write = os.pipe()
    argv = checks_program.command(write, str(checks), sys_path)
    argv[1:1] = list(extra_args)
    try:
        done = subprocess.run(argv, pass_fds=(write,), capture_output=True, text=True,
                              cwd=tmp_path, check=False)
    finally:
        os.close(write)
    with open(read, "rb") as verdict:
        word = verdict.read().split(b"\n", 1)[0]
    return word, done.stderr


def test_the_checks_program_starts_from_its_cached_bytecode_not_its_source(tmp_path):
    """Run as a script, checks_program.py was compiled from source by every checks run (4 ms of
    CPU on the run's critical path); imported, its bytecode in __pycache__ is used."""
    assert not any(arg.endswith(".py") and "checks_program" in arg
                   for arg in checks_program.command(3, "/x/checks.py", []))
    # -X importtime lists every module imported; a script run as __main__ is not among them
    word, stderr = _run_checks_program(tmp_path, list(checks_sys_path()), ("-X", "importtime"))
    assert word == b"pass", stderr
    assert "ci_eval.run.checks.checks_program" in stderr


def test_the_checks_program_is_the_harness_own_even_when_another_ci_eval_comes_first(tmp_path):
    """The checks' sys.path may list a site-packages folder holding another ci_eval before the
    harness's: the program that guards the verdict is the harness's own all the same."""
    other = tmp_path / "other"
    program = other / "ci_eval" / "run" / "checks"
    program.mkdir(parents=True)
    for folder in (other / "ci_eval", other / "ci_eval" / "run", program):
        (folder / "__init__.py").write_text("")
    (program / "checks_program.py").write_text(
        "import os, sys\ndef main():\n    os.write(int(sys.argv[1]), b'forged')\n    return 0\n")
    word, stderr = _run_checks_program(tmp_path, [str(other), *checks_sys_path()])
    assert word == b"pass", stderr
