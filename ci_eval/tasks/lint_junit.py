"""The `junit-ids` rule: a checks.py that runs jest through run_junit_tests without the naming
that gives stable ids (docs/tasks-beyond-python.md). Under jest-junit's default naming an id is
`parseDuration > parseDuration hours reads hours`, which jest never prints, and two files' tests
of the same name are one id; classname="jest" sets the naming under which an id is the test file
and what jest prints. Found: a run_junit_tests(...) call (any alias of it) whose first argument
holds a string naming jest (`jest`, `npx jest`, `node_modules/.bin/jest`, a jest.js) and whose
classname is not "jest". Pure: the parsed module in, (line, message) out.
"""

from __future__ import annotations

import ast
import re

HELPER = "run_junit_tests"
_JEST = re.compile(r"(^|[\s/])jest(\.js)?($|\s)")
MESSAGE = ("run_junit_tests runs jest without classname=\"jest\": jest-junit's default ids "
           "(\"describe > describe test\") match nothing jest prints and merge two files' "
           "tests of the same name; pass classname=\"jest\" (docs/tasks-beyond-python.md) "
           "[junit-ids]")


def unstable_jest_ids(tree: ast.Module) -> list[tuple[int, str]]:
    names = _helper_names(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node.func) in names and node.args):
            continue
        if not any(_JEST.search(text) for text in _strings(node.args[0])):
            continue
        classname = next((k.value for k in node.keywords if k.arg == "classname"), None)
        if not (isinstance(classname, ast.Constant) and classname.value == "jest"):
            found.append((node.lineno, MESSAGE))
    return found


def _helper_names(tree: ast.Module) -> set[str]:
    names = {HELPER, f"checks.{HELPER}", f"ci_eval.checks.{HELPER}"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("ci_eval.checks",
                                                                "ci_eval.checks.junit_tests"):
            names.update(alias.asname or alias.name for alias in node.names
                         if alias.name == HELPER)
    return names


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_called(func.value)}.{func.attr}"
    return ""


def _strings(node: ast.expr) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def checks_py_jest_problems(checks_py) -> list[str]:
    """verify's problems for a task's checks.py (none when it is missing or does not parse:
    validate says so)."""
    try:
        tree = ast.parse(open(checks_py, "rb").read(1 << 20))
    except (OSError, SyntaxError, ValueError):
        return []
    return [f"checks.py:{line}: {message}" for line, message in unstable_jest_ids(tree)]
