"""A generated task's prompt: the failure as a user sees it (the failing test, what it calls and
expects, what pytest said it got), never the fix; and the leak check every prompt passes: no line
the solution adds appears in it (pure: text in, text out)."""

from __future__ import annotations

import ast
import re

from ci_eval.generate.decide import added_lines

MAX_TEST_LINES = 30
MAX_SUMMARY = 300


def test_source(source: str, test_id: str) -> str | None:
    """The source of the test function `test_id` names ("path::Class::name[param]") in the test
    file's `source`, None when it cannot be found or parsed."""
    names = [re.sub(r"\[.*$", "", part) for part in test_id.split("::")[1:]]
    if not names:
        return None
    try:
        scope: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    node = None
    for name in names:
        node = next((n for n in scope if isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name), None)
        if node is None:
            return None
        scope = node.body
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    lines = source.splitlines()[node.lineno - 1:node.end_lineno]
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    lines = [line[indent:] for line in lines]
    if len(lines) > MAX_TEST_LINES:
        lines = lines[:MAX_TEST_LINES] + ["..."]
    return "\n".join(lines)


def clean(text: str) -> str:
    """Text from the mined repository's output, made inert for a markdown prompt."""
    text = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    return text.replace("```", "'''")


def prompt(failing: list[str], summary: str, sources: dict[str, str]) -> str:
    """The prompt for a task whose `failing` tests fail (pytest's `summary` line of the first
    one; `sources`: the test file texts, by path)."""
    named = summary.split()[1] if len(summary.split()) > 1 else ""
    failing = sorted(failing, key=lambda test: test != named)  # the one the summary is about
    first = failing[0]
    parts = ["A test of this project fails, and it should pass.", "",
             f"Running `python -m pytest {first}` reports:", "", "```",
             clean(summary)[:MAX_SUMMARY] or f"FAILED {first}", "```"]
    code = test_source(sources.get(first.split("::")[0], ""), first)
    if code:
        parts += ["", "The test does this:", "", "```python", clean(code), "```"]
    if len(failing) > 1:
        more = [f"- `{test}`" for test in failing[1:6]]
        if len(failing) > 6:
            more.append(f"- and {len(failing) - 6} more")
        parts += ["", "These fail as well:", *more]
    parts += ["", ("Find the cause in the project's code and fix it there. The tests describe "
                   "the intended behaviour: leave them as they are. The project's other tests "
                   "must keep passing.")]
    return "\n".join(parts) + "\n"


def leaks(prompt_text: str, solution_patch: str) -> list[str]:
    """The lines the solution adds that appear in the prompt (whitespace aside)."""
    said = " ".join(prompt_text.split())
    return [line for line in added_lines(solution_patch) if " ".join(line.split()) in said]


def safe_prompt(failing: list[str], summary: str, sources: dict[str, str],
                solution_patch: str) -> str | None:
    """The prompt, without the test's code when that code repeats a line of the fix; None when
    even the bare failure does."""
    full = prompt(failing, summary, sources)
    if not leaks(full, solution_patch):
        return full
    bare = prompt(failing, summary, {})
    return None if leaks(bare, solution_patch) else bare
