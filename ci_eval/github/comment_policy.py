"""When the report goes to the pull request (the action's `comment` input, gate --comment):
  always      create or update the comment (the default)
  on-change   create it only when a task's status is not "unchanged" or the gate fails
  on-failure  create it only when the gate fails
  off         never touch the pull request
A comment that exists already is always updated (except with off), so it never keeps telling
of a failure that was fixed.

A module of its own, without the REST client: every `ci-eval` start builds the gate's parser,
whose --comment choices these are (importing github/comment.py there cost each start of any
command about 0.07 CPU s).
"""

from __future__ import annotations

COMMENT_POLICIES = ("always", "on-change", "on-failure", "off")


def may_create(policy: str, *, failed: bool, changed: bool) -> bool | None:
    """Whether a missing comment may be created; None: leave the pull request alone."""
    if policy == "off":
        return None
    return {"always": True, "on-change": changed or failed, "on-failure": failed}[policy]

