"""The shard jobs of this workflow run, so the comment links the job of a shard that crashed or
failed rather than only the whole run.

    jobs, problem = shard_jobs(ctx, count=3)   # {2: ShardJob("https://…/job/77", "failure")}

GitHub's jobs API (GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs?filter=latest, PyGithub
`WorkflowRun.jobs()`; needs `actions: read`) lists each job's `name`, `html_url` and
`conclusion`. A shard's job is the one named as eval.yml names it, `shard I/N` (a reusable
workflow's caller prefixes "CALLER / "), with N the planned count; the latest attempt wins.
Outside a workflow run (no GITHUB_RUN_ID) there is nothing to ask and nothing to say. Any
failure to ask (no repository, no permission, GitHub down) is a problem to print, never an
error: the comment then links the run, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ci_eval.github import client as gh_client
from ci_eval.github.context import Context

SHARD_JOB_RE = re.compile(r"(?:.* / )?shard ([1-9][0-9]{0,2})/([1-9][0-9]{0,2})")
# a job page on GitHub (or the API's own host, as GitHub Enterprise and the tests' fake answer)
JOB_URL_RE = re.compile(r"https?://[A-Za-z0-9.:\[\]-]+/[A-Za-z0-9._~/%-]{1,500}")
MAX_JOBS = 1000  # 256 shards at most, plus the other jobs and re-run attempts
FAILED = ("failure", "cancelled", "timed_out", "startup_failure")


@dataclass(frozen=True)
class ShardJob:
    """A shard's job (the shard's number is its key in shard_jobs' answer)."""

    url: str
    conclusion: str | None  # success, failure, cancelled, ...; None while it runs

    @property
    def failed(self) -> bool:
        return self.conclusion in FAILED


def match_shard_jobs(jobs: Iterable[tuple[str, str, str | None]], count: int) -> dict[int,
                                                                                     ShardJob]:
    """(name, html_url, conclusion) of each job, in the API's order -> shard number -> its job,
    for the names `shard I/count`; a URL that does not look like a job page is left out."""
    found: dict[int, ShardJob] = {}
    for name, url, conclusion in jobs:
        match = SHARD_JOB_RE.fullmatch(name or "")
        if not match or int(match.group(2)) != count or not JOB_URL_RE.fullmatch(url or ""):
            continue
        shard = int(match.group(1))
        if 1 <= shard <= count:
            found[shard] = ShardJob(url, conclusion)
    return found


def fetch_jobs(client: gh_client.Client, repository: str, run_id: int, *, sleep=None,
               clock=None) -> list[tuple[str, str, str | None]]:
    run = client.github.get_repo(repository).get_workflow_run(run_id)

    def once() -> list[tuple[str, str, str | None]]:
        listed = []
        for job in run.jobs("latest"):
            listed.append((job.name, job.html_url, job.conclusion))
            if len(listed) >= MAX_JOBS:
                break
        return listed

    return gh_client.call(once, describe=f"list the jobs of workflow run {run_id}", sleep=sleep,
                          clock=clock)


def shard_jobs(ctx: Context, count: int, *, token: str | None = None,
               api_url: str | None = None, sleep=None,
               clock=None) -> tuple[dict[int, ShardJob], str]:
    """(shard number -> its job, why none could be listed: "" when they were, or when this is
    no workflow run)."""
    if not ctx.run_id:
        return {}, ""
    if not ctx.repository:
        return {}, "no repository (GITHUB_REPOSITORY)"
    try:
        client = gh_client.make_client(token, api_url)
        jobs = fetch_jobs(client, ctx.repository, int(ctx.run_id), sleep=sleep, clock=clock)
    except Exception as exc:  # noqa: BLE001 - a missing link never fails the report
        return {}, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return match_shard_jobs(jobs, count), ""
