"""The PR comment when there is nothing to compare: the agent could not start in the shards
(setup broken), the plan job failed, or the pull request changes nothing the verdict depends
on (no agent ran: render_idle). The same sticky marker as the full report, so the next
run's report replaces it in place.

    ### ❌ ci-eval: agent setup broken: ANTHROPIC_API_KEY is not set
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ci_eval.render.compare import COMMENT_MARKER
from ci_eval.render.inert import code_span
from ci_eval.results.setup_problem import SetupProblem

SETUP_HELP = ("No agent run started, so no pass rate was measured. Add the secret (Settings → "
              "Secrets and variables → Actions) and hand it to the run step's `env:` in the "
              "workflow; a task's `requires` goes into the action's `pip-packages` or a step "
              "before it.")


PLAIN = re.compile(r"[A-Za-z0-9_ .,;:'()/-]{1,1000}")  # shown as is; anything else as a code span


def _shown(text: str) -> str:
    """Text read from a shard's artifact: as is when it is plain words (a variable's name), else
    an inert code span (it names repo-controlled things: agent names, tasks, paths)."""
    flat = " ".join(text.split())
    return flat if PLAIN.fullmatch(flat) else code_span(flat, limit=1_000)


def footer(run_url: str | None, commit: str | None) -> str:
    items = [f"[workflow run]({run_url})" if run_url else "workflow run unknown",
             f"commit {commit[:12]}" if commit else "commit unknown"]
    return "\n---\n<sub>" + " · ".join(items) + "</sub>\n"


def setup_headline(problems: Sequence[SetupProblem]) -> str:
    first = problems[0]
    what = "agent setup broken" if first.field in (None, "--agent") else "setup broken"
    return f"ci-eval: {what}: {_shown(first.headline)}"


def render_setup_broken(problems: Sequence[SetupProblem], *, run_url: str | None = None,
                        commit: str | None = None,
                        job_links: Mapping[str, str] | None = None) -> str:
    """`job_links`: shard ("1/2") -> its job's page, linked from that shard's line."""
    lines = [COMMENT_MARKER, f"### ❌ {setup_headline(problems)}", ""]
    for problem in problems:
        where = f"shard {_shown(problem.shard)}" if problem.shard else "the run"
        link = (job_links or {}).get(problem.shard or "")
        where += f" ([job]({link}))" if link else ""
        lines.append(f"> {where}: {_shown(problem.problem)}")
    lines += ["", SETUP_HELP]
    return "\n".join(lines) + "\n" + footer(run_url, commit)


def plan_failed_headline(result: str) -> str:
    return f"ci-eval: the plan job ended `{result}`: no task was evaluated"


def render_plan_failed(result: str, *, run_url: str | None = None,
                       commit: str | None = None) -> str:
    lines = [COMMENT_MARKER, f"### ❌ {plan_failed_headline(_shown(result))}", "",
             ("The plan job's log in the workflow run says why (bad tasks, a broken ci-eval.yaml, "
              "an install that failed). This check fails until a run gets past the plan.")]
    return "\n".join(lines) + "\n" + footer(run_url, commit)


def render_idle(reason: str, *, run_url: str | None = None, commit: str | None = None) -> str:
    """A pull request that changes nothing the verdict depends on: no agent ran, the check
    passes, and the comment says why in one line (verdict/relevance.py)."""
    return (f"{COMMENT_MARKER}\n### ✅ ci-eval: no agent run\n\n> {_shown(reason)}\n"
            + footer(run_url, commit))
