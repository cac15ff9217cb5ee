"""The pure decisions of generation: which paths are tests, what two runs of each state say
about every test (fail_to_pass, pass_to_pass, flaky), why a candidate is rejected, and a
difficulty estimate. No files, no processes."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

PASSED = "PASSED"
RED = ("FAILED", "ERROR")

# The reasons a candidate is rejected (the summary counts them under these names).
NO_TEST_CHANGE = "no test change"
NO_SOURCE_CHANGE = "no source change"
TOO_LARGE = "too large"
BASE_RED = "base tests red"
SOLUTION_RED = "solution breaks tests"
FLAKY = "flaky"
NO_FAIL_TO_PASS = "no test fails at base"
TIMED_OUT = "timed out"
NO_EVIDENCE = "tests did not run"
NOT_APPLIED = "does not apply"
VERIFY_FAILED = "verify failed"
DUPLICATE = "duplicate"
LEAK = "prompt leaks the fix"
UNSUPPORTED = "unsupported tree"
EVERY_TEST_BREAKS = "breaks every test"
SURVIVED = "no test notices"
CRASHED = "internal error"


@dataclass(frozen=True)
class Limits:
    max_files: int = 10  # source files the solution touches
    max_lines: int = 200  # lines it adds and removes


def is_test_path(path: str) -> bool:
    """A file of the test suite: under a tests/ or test/ folder, test_*.py, *_test.py or a
    conftest.py (pytest's conventions)."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (any(part in ("tests", "test", "testing") for part in parts[:-1])
            or name == "conftest.py" or (name.endswith(".py") and (
                name.startswith("test_") or name.endswith("_test.py"))))


def is_source_path(path: str) -> bool:
    """A Python file of the project that is not a test (docs, changelogs and configuration are
    not the fix)."""
    parts = PurePosixPath(path).parts
    return (path.endswith(".py") and not is_test_path(path)
            and not any(part in ("docs", "doc", "examples", "bench", "benchmarks", ".github")
                        for part in parts[:-1])
            and parts[-1] not in ("setup.py", "noxfile.py", "conftest.py"))


def patch_size(patch: str) -> tuple[int, int]:
    """(files, lines added + removed) of a unified diff."""
    files = len(re.findall(r"^diff --git ", patch, re.MULTILINE))
    lines = sum(1 for line in patch.splitlines()
                if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))
    return files, lines


def added_lines(patch: str) -> list[str]:
    """The lines a patch adds, stripped (blank ones and lone brackets left out: too common to
    count as giving the fix away)."""
    found = []
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            text = line[1:].strip()
            if len(text) > 3 and text not in ("else:", "try:", "pass", "return", "finally:"):
                found.append(text)
    return found


@dataclass
class Judgement:
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    reason: str = ""  # empty: keep
    detail: str = ""


def judge(base: list[dict[str, str]], solved: list[dict[str, str]]) -> Judgement:
    """Two (or more) runs of the base and of the base with the solution -> the candidate's tests.
    A test whose outcome differs between runs of the same state is flaky and never a gate; a
    test red at base and not fixed, or green at base and red with the solution, rejects."""
    result = Judgement()
    tests = sorted(set().union(*base, *solved))
    for test in tests:
        at_base = {run.get(test) for run in base}
        with_fix = {run.get(test) for run in solved}
        if len(at_base) > 1 or len(with_fix) > 1:
            result.flaky.append(test)
            continue
        before, after = at_base.pop(), with_fix.pop()
        if (before in RED or before is None) and after == PASSED:
            result.fail_to_pass.append(test)  # None: not collected (an import the fix adds)
        elif before == PASSED and after == PASSED:
            result.pass_to_pass.append(test)
        elif before in RED and after is None and "::" not in test:
            continue  # a module that did not import at base: its tests are judged one by one
        elif before in RED:
            result.reason, result.detail = BASE_RED, f"{test}: {before} at base and with the fix"
        elif before == PASSED and after in RED:
            result.reason = result.reason or SOLUTION_RED
            result.detail = result.detail or f"{test}: passes at base, {after} with the fix"
    if result.reason:
        return result
    if not result.fail_to_pass:
        result.reason = FLAKY if result.flaky else NO_FAIL_TO_PASS
        result.detail = (f"{len(result.flaky)} test(s) change outcome between two runs: "
                         f"{', '.join(result.flaky[:3])}" if result.flaky else
                         "every test that passes with the fix passes at base too")
    return result


def judge_mutant(base: list[dict[str, str]], mutated: list[dict[str, str]]) -> Judgement:
    """The same judgement for a synthesized bug: the mutant is the base, the original source
    the solution; a mutant that breaks every test (an import error) tells nothing."""
    result = judge(mutated, base)
    if result.reason == NO_FAIL_TO_PASS:
        result.reason, result.detail = SURVIVED, "every test passes with the mutant"
    elif not result.reason and not result.pass_to_pass:
        result.reason, result.detail = EVERY_TEST_BREAKS, "no test keeps passing"
    return result


def difficulty(files: int, lines: int, tests: int) -> int:
    """1-5 from the size of the fix and the tests that pin it (a guess to sort by, no more)."""
    score = 1 + (files > 1) + (lines > 10) + (lines > 40) + (tests > 3)
    return min(5, score)


def duplicate_key(solution: str, fail_to_pass: list[str]) -> str:
    """Same fix (its changed lines, whitespace aside) and same tests: one task."""
    changed = [line[0] + " ".join(line[1:].split()) for line in solution.splitlines()
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    text = "\n".join(changed) + "\0" + "\n".join(sorted(fail_to_pass))
    return hashlib.sha256(text.encode()).hexdigest()[:20]
