"""Issue #18, class 7: agent text rendered live in the PR comment.

Reasons quote agent output, and `@org/maintainers please merge ![beacon](https://x)
[ok](javascript:alert(1))` arrived verbatim in the Why column of the comment the bot posts: a
team mention, an image beacon, a link. Defence: ci_eval/render/inert.py: every agent- or
checks-derived string in markdown (the Why column, a broken setup's reason, the agent's name)
is a code span whose fence is longer than any backtick run in it, on one line, cut at a word
boundary with an ellipsis, `|` escaped in table cells; the step summary is that markdown; the
::error annotations escape %, CR and LF (and `:` `,` in properties) as GitHub's workflow
commands require.
"""

from __future__ import annotations

import re

from .conftest import needs_sandbox

HOSTILE = ("@org/maintainers please merge ![beacon](https://x) [ok](javascript:alert(1)) "
           "<img src=x onerror=alert(1)> | ``fence`` &amp;")


HOSTILE_WHY = (
    "| ```2× agent exited 1 (@org/maintainers please merge ![beacon](https://x) "
    "[ok](javascript:alert(1)) <img src=x onerror=alert(1)> \\| ``fence`` &amp;); FAIL: "
    "greet.txt:1: expected…``` |")
HONEST_WHY = ("| `2× agent exited 1 (ran out of ideas); FAIL: greet.txt:1: expected 'hello', "
              "found 'bye'; agent output: …ran out of ideas` |")
SETUP_BROKEN = ("### ❌ ci-eval: agent setup broken: ```agent exited 1 (@org/maintainers please "
                "merge ![beacon](https://x) [ok](javascript:alert(1)) <img src=x "
                "onerror=alert(1)> | ``fence`` &amp;)``` (every run failed the same way; the pass "
                "rates say nothing about the agent)")


def _outside_code(markdown: str) -> str:
    """The markdown with its code spans (and the \\| escapes in them) taken out."""
    return "\n".join(re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line)
                     for line in markdown.splitlines())


def _gate(arena, out: str) -> tuple[str, str]:
    """`ci-eval gate` as in the report job: (the step summary it wrote, its stdout)."""
    summary = arena.base / f"{out}-summary.md"
    result = arena.run("gate", "--results", out, "--no-comment", "--no-history",
                       "--allow-agent-mismatch",
                       env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"})
    assert result.returncode == 1, result.detail()
    return summary.read_text(), result.stdout


@needs_sandbox
def test_a_hostile_reason_renders_inert_in_the_comment_summary_and_annotations(arena):
    """The attack prints the hostile line and exits 1 (twice: the suite's setup is 'broken',
    so its reason heads the comment too); the honest twin fails the same way with a plain
    line. Both are rendered alike, as code; nothing of the attack is live markdown."""
    arena.task()
    assert arena.run("run", "-k", "1", "--agent", "reference").record()["status"] == "pass"
    update = arena.run("baseline", "update", "--all")
    assert update.returncode == 0, update.detail()
    for out, line in (("hostile", HOSTILE), ("honest", "ran out of ideas")):
        agent = arena.agent(f"printf '%s\\n' '{line}'\nexit 1\n")
        run = arena.run("run", "-k", "2", "--out", out, "--agent-cmd", agent, out=out)
        assert [r["status"] for r in run.records()] == ["fail", "fail"], run.detail()
        assert line in run.records()[0]["reason"]

    comment = arena.run("compare", "--results", "hostile", "--format", "markdown",
                        "--allow-agent-mismatch").stdout
    summary, annotations = _gate(arena, "hostile")
    for markdown in (comment, summary):
        lines = markdown.splitlines()
        assert HOSTILE_WHY in [line[line.index("| ```"):] for line in lines if "| ```" in line]
        assert SETUP_BROKEN in lines, lines[:3]
        live = _outside_code(markdown)
        for token in ("@org", "![", "](", "<img", "javascript:", "&amp;"):
            assert token not in live, (token, live)
    commands = [line for line in annotations.splitlines() if line.startswith("::")]
    assert commands and all("@org" not in line for line in commands), commands
    assert any(line.startswith("::error title=ci-eval::task-001-greet") for line in commands)

    honest = arena.run("compare", "--results", "honest", "--format", "markdown",
                       "--allow-agent-mismatch").stdout
    assert any(line.endswith(HONEST_WHY) for line in honest.splitlines()), honest


def test_annotations_escape_what_github_reads_as_commands():
    """GitHub's workflow-command rules: %, CR and LF in the message; also : and , in
    properties. A message cannot end the command early or start another."""
    from ci_eval.github.actions import command

    line = command("error", "50% done\r\n::warning::forged", title="a:b,c\nd")
    assert line == "::error title=a%3Ab%2Cc%0Ad::50%25 done%0D%0A::warning::forged"
    assert "\n" not in line and "\r" not in line


def test_code_spans_pick_a_safe_fence_and_cut_at_a_word():
    from ci_eval.render.inert import code_span

    assert code_span("a `b` c") == "``a `b` c``"
    assert code_span("`edge`") == "`` `edge` ``"
    assert code_span("x ``` y") == "````x ``` y````"
    assert code_span("a | b", in_table=True) == "`a \\| b`"
    assert code_span("line one\nline two\r\n") == "`line one line two`"
    assert code_span("") == ""
    assert code_span("alpha beta gamma delta", limit=16) == "`alpha beta…`"
    assert code_span("x" * 40, limit=10) == "`xxxxxxxxx…`"
