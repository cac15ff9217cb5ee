"""The sticky comment while a new run is under way (pure): a note on top of the previous run's
report, or a short comment of its own when there is none. The run's report replaces either.

    in_progress_body(previous_body, marker, sha="3fa0ce1f…", run_url="https://…/runs/9")

The note sits between two hidden markers, so a second note (a newer push whose run started
before the older one's report) replaces the first instead of stacking on it, and the previous
report underneath is kept as it was.
"""

from __future__ import annotations

import re

NOTE_START = "<!-- ci-eval-in-progress -->"
NOTE_END = "<!-- /ci-eval-in-progress -->"
_NOTE_RE = re.compile(re.escape(NOTE_START) + r".*?" + re.escape(NOTE_END) + r"\n*", re.S)
_SHA_RE = re.compile(r"[0-9a-f]{7,64}")


def _run_words(sha: str | None, run_url: str | None) -> tuple[str, str]:
    commit = f" for `{sha[:12]}`" if sha and _SHA_RE.fullmatch(sha) else ""
    link = f": [workflow run]({run_url})" if run_url else ""
    return commit, link


def previous_report(body: str, marker: str) -> str:
    """What the comment says besides its marker and any earlier note ("" when nothing)."""
    return _NOTE_RE.sub("", body.replace(marker, "", 1)).strip("\n")


def in_progress_body(previous: str | None, marker: str, *, sha: str | None,
                     run_url: str | None) -> str:
    """The comment's body while the run for `sha` is under way; `previous`: the comment's body
    now (None: there is no comment yet)."""
    commit, link = _run_words(sha, run_url)
    kept = previous_report(previous, marker) if previous else ""
    if not kept:
        note = (f"### ⏳ ci-eval: a run{commit} is under way{link}\n\n"
                "Its report replaces this comment when the run ends.")
        return f"{marker}\n{NOTE_START}\n{note}\n{NOTE_END}\n"
    note = (f"> ⏳ **A new ci-eval run{commit} is under way**{link}. Below: the previous "
            "run's report, until the new one replaces it.")
    return f"{marker}\n{NOTE_START}\n{note}\n{NOTE_END}\n\n{kept}\n"
