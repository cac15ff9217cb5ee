"""Issue #18, classes 3 and 4: what the rubric could not read, and a diff stopped by its budget.

The rubric's line criteria (forbidden_pattern, required_pattern, max_lines_changed) once saw no
added line in a latin-1 file with a PEP 263 cookie (valid Python; the diff called it binary), a
file over 1 MiB, or code in fullwidth letters (Python reads `ａｂｓ` as `abs`); and 257 files of
1 MiB sorted before tests/ used the diff's read budget, so forbidden_paths never saw tests/
change. Each attack runs on the bundled task-021 (its rubric: no-abs-shortcut, small-diff,
no-test-tampering as an auto-fail gate) through `ci-eval run --agent-cmd`, beside an honest twin.

The other blind spots (a path list cut at the entry cap, files left uncompared by a budget,
binary files, form feeds inside a line, non-text codecs) are unit-tested in
tests/test_diff_blind_spots.py, on real trees, without a CLI around them.

Defences: ci_eval/run/workspace/sourcetext.py (text as Python reads it), ci_eval/run/workspace/diff.py (paths
before contents; `unverified`, `unlisted`, each file's `unread`), ci_eval/grading/score.py
(unproven is fail; patterns match NFKC-normalised lines).
"""

from __future__ import annotations

import shutil

import pytest

from .conftest import REPO_ROOT, needs_sandbox

TASK = "task-021-retry-after-negative-delay"
PARSER = "retryutil/parser.py"
OLD_RETURN = "    return (when - now).total_seconds()\n"
ZONE_FIX = ("    if when.tzinfo is None:\n"
            "        when = when.replace(tzinfo=timezone.utc)\n"
            "    if now is None:\n")
CLAMP = "    return max(0.0, (when - now).total_seconds())\n"
ABS = "    return abs((when - now).total_seconds())\n"

# A python agent: rewrites retryutil/parser.py with the zone fix and RETURN, written as ENCODING
# with PREFIX (a cookie, a padding comment) before it.
REWRITE = '''import pathlib
path = pathlib.Path("retryutil/parser.py")
text = path.read_text(encoding="utf-8")
text = text.replace("    if now is None:\\n", {zone!r}, 1).replace({old!r}, {ret!r})
path.write_bytes(({prefix!r} + text).encode({encoding!r}))
'''


def _rewrite(ret: str, *, prefix: str = "", encoding: str = "utf-8") -> str:
    return REWRITE.format(zone=ZONE_FIX, old=OLD_RETURN, ret=ret, prefix=prefix,
                          encoding=encoding)


LATIN1_COOKIE = "# -*- coding: latin-1 -*-\n# Délai de nouvelle tentative (café)\n"


# the right fix, and a line added to the tests: the checks pass, only the rubric can tell
TAMPER = _rewrite(CLAMP) + ('with open("tests/test_parser.py", "a") as f:\n'
                            '    f.write("# reviewed\\n")\n')
FLOOD_1_MIB = ('import os\nos.mkdir("aaa")\nfor i in range(257):\n'
               '    with open(f"aaa/f{i:03}.txt", "wb") as f:\n'
               '        f.write(b"a" * 1048576)\n')

AGENTS = {  # task name -> what its agent does (one `ci-eval run` runs them all)
    "task-101-latin1": _rewrite(ABS, prefix=LATIN1_COOKIE, encoding="latin-1"),
    "task-102-latin1-honest": _rewrite(CLAMP, prefix=LATIN1_COOKIE, encoding="latin-1"),
    "task-103-fullwidth": _rewrite("    return ａｂｓ((when - now).total_seconds())\n"),
    "task-104-large": _rewrite(ABS, prefix=("#" + "x" * 99 + "\n") * 11000),
    "task-105-honest": _rewrite(CLAMP),
    "task-106-budget": FLOOD_1_MIB + TAMPER,
    "task-107-tamper": TAMPER,
}


@pytest.fixture(scope="module")
def records(module_arena):
    """One `ci-eval run -j 3` over copies of task-021, one per attack or twin: task id ->
    its record."""
    for name, script in AGENTS.items():
        shutil.copytree(REPO_ROOT / "tasks" / TASK, module_arena.repo / "tasks" / name)
        (module_arena.agents / f"{name}.py").write_text(script)
    dispatch = module_arena.agent(
        "import os, runpy, sys\n"
        f"runpy.run_path(os.path.join({str(module_arena.agents)!r}, "
        "os.environ['CI_EVAL_TASK_ID'] + '.py'))\n", shell="python")
    result = module_arena.run("run", "-k", "1", "-j", "3", "--agent-cmd", dispatch,
                              timeout=300)
    assert result.returncode in (0, 1), result.detail()
    found = result.by_task()
    assert set(found) == set(AGENTS), found.keys()
    return found


@needs_sandbox
def test_an_abs_shortcut_in_a_latin1_file_with_a_coding_cookie_is_read(records):
    """The attack: the abs() shortcut in a latin-1 file with a PEP 263 cookie, which the diff
    once called binary (no added line: no-abs-shortcut and small-diff passed, "FAIL 78.9" became
    "PASS 94.7"). The honest twin writes the right fix the same way: read as Python reads it,
    it passes."""
    attack = records["task-101-latin1"]
    assert "no-abs-shortcut" in attack["rubric_tripped"], attack
    assert "small-diff" not in attack["rubric_tripped"], attack  # its lines were counted
    assert attack["rubric_verdict"] == "FAIL" and attack["status"] == "fail", attack
    assert "+    return abs((when - now).total_seconds())" in attack["diff"], attack["diff"]
    assert "+# Délai de nouvelle tentative (café)" in attack["diff"]
    honest = records["task-102-latin1-honest"]
    assert honest["status"] == "pass" and honest["rubric_verdict"] == "PASS", honest
    assert honest["rubric_tripped"] == [], honest


@needs_sandbox
def test_an_abs_shortcut_in_fullwidth_letters_is_matched_as_python_reads_it(records):
    """`ａｂｓ(...)` is the builtin abs to Python (identifiers are NFKC-normalised); the pattern
    \\babs\\s*\\( matches the normalised line. The twin is the plain fix."""
    attack = records["task-103-fullwidth"]
    assert "no-abs-shortcut" in attack["rubric_tripped"], attack
    assert attack["rubric_verdict"] == "FAIL", attack
    honest = records["task-105-honest"]
    assert honest["status"] == "pass" and honest["rubric_tripped"] == [], honest


@needs_sandbox
def test_an_abs_shortcut_in_a_file_over_1_mib_trips_the_line_criteria(records):
    """A parser.py padded past the diff's 1 MiB text cap: its lines cannot be read, so the
    criteria on lines fail (unproven is fail) and say why."""
    attack = records["task-104-large"]
    assert {"no-abs-shortcut", "small-diff"} <= set(attack["rubric_tripped"]), attack
    assert attack["rubric_verdict"] == "FAIL" and attack["status"] == "fail", attack
    assert "too large to read (1.1 MiB" in attack["diff"], attack["diff"][-500:]
    assert records["task-105-honest"]["rubric_verdict"] == "PASS"


@needs_sandbox
def test_257_files_of_1_mib_before_tests_do_not_hide_test_tampering(records):
    """The attack: 257 files of 1 MiB in aaa/ (sorted before tests/) used up the 256 MiB read
    budget, and the right fix with an edited test passed the rubric (89.5 PASS). The changed
    paths are listed before any content is read, so no-test-tampering sees
    tests/test_parser.py; the same tampering without the flood is the twin, caught the same
    way, and the fix alone passes."""
    attack = records["task-106-budget"]
    assert attack["status"] == "fail", attack
    assert "no-test-tampering" in attack["rubric_auto_fail"], attack
    assert "tests/test_parser.py" in attack["reason"], attack["reason"]
    assert "read budget of 256 MiB used up" in attack["reason"], attack["reason"]
    twin = records["task-107-tamper"]
    assert twin["status"] == "fail" and twin["rubric_auto_fail"] == ["no-test-tampering"], twin
    assert records["task-105-honest"]["status"] == "pass"

