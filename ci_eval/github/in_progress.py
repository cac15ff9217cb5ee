"""The "run under way" note on the sticky comment, posted by a job that runs none of the pull
request's code (eval.yml's `progress` job: no checkout, `pull-requests: write` only).

    note = post_in_progress(context.from_env(), policy="always", marker=marker_for(None))
    note.level, note.message      # "info" | "notice" | "warning", what to print

Never raises for GitHub's answers (a malformed one included) and never fails the check: the
note is a courtesy, and the report's comment replaces it. A pull request that gets a read-only
token (a fork, Dependabot) is skipped with a notice before any request; a 403 anyway (a job
without `pull-requests: write`) is a notice too; anything else GitHub answers is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.errors import UserError
from ci_eval.github.comment import minimized_note, try_upsert_comment
from ci_eval.github.comment_policy import may_create
from ci_eval.github.context import Context, no_secrets_reason
from ci_eval.render.in_progress import in_progress_body


@dataclass(frozen=True)
class Note:
    level: str  # "info" (done, or nothing to do), "notice" (skipped), "warning" (not posted)
    message: str
    action: str = ""  # the comment's fate: created | updated | unchanged | skipped, "" if none
    url: str = ""


def post_in_progress(ctx: Context, *, policy: str, marker: str, pr: int | None = None,
                     repository: str | None = None, author: str | None = None,
                     token: str | None = None, api_url: str | None = None,
                     sleep=None, clock=None) -> Note:
    pr = pr or ctx.pr_number
    repository = repository or ctx.repository
    if pr is None:
        raise UserError("no pull request (pass --pr N, or run on a pull_request event)",
                        field="--pr")
    # before the run has a result: nothing failed or changed yet, so a missing comment is
    # created only with always (the run may end needing no comment at all)
    create = may_create(policy, failed=False, changed=False)
    if create is None:
        return Note("info", "no in-progress note (--policy off)", "skipped")
    why = no_secrets_reason(ctx)
    if why:
        return Note("notice", f"no in-progress note: the token is read-only here ({why})",
                    "skipped")
    if not repository:
        raise UserError("no repository (set GITHUB_REPOSITORY or pass --repo OWNER/NAME)",
                        field="--repo")
    sha = ctx.head_sha or ctx.sha

    def body(current: str | None) -> str:
        return in_progress_body(current, marker, sha=sha, run_url=ctx.run_url)

    attempt = try_upsert_comment(repository, pr, body, token=token, api_url=api_url,
                                 marker=marker, author=author, create=create, sleep=sleep,
                                 clock=clock)
    if attempt.denied:
        return Note("notice", f"no in-progress note: GitHub answered 403 ({attempt.denied}); "
                    "the job needs `pull-requests: write`")
    if attempt.result is None:
        return Note("warning", f"the in-progress note was not posted: {attempt.problem}")
    result = attempt.result
    if result.action == "skipped":
        return Note("info", f"no in-progress note (--policy {policy}: no comment to update)",
                    "skipped")
    if result.minimized:
        return Note("notice", minimized_note(result, pr), result.action, result.url)
    return Note("info", f"{result.action} the comment {result.url} (a run is under way)",
                result.action, result.url)
