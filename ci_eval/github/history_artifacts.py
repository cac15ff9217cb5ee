"""Run history from GitHub: the `ci-eval-history` artifacts of earlier successful eval runs on the
default branch, validated and written into a local history folder (`ci-eval history fetch`).

    report = fetch_history(client, "acme/widgets", out=Path("history"), workflow="eval.yml",
                           limit=10)
    report.notes   # per run: fetched (the file written), already (in the folder), or skipped (why)

What is fetched (DESIGN.md "GitHub layer", History):
  runs       the last `limit` runs of `workflow` on `branch` (default: the repository's default
             branch) that concluded success, listed through PyGithub. Only runs of the events
             that record history (push, workflow_dispatch, schedule; see context.py) and of the
             repository itself count: a fork's pull request whose branch is also called `main`
             is passed over. At most limit * SCAN_FACTOR runs are listed.
  artifact   each run's artifact named HISTORY_ARTIFACT (report mode uploads it on the default
             branch). A run without one (before history was recorded) and an expired artifact
             (GitHub keeps them 90 days by default) are skipped with a note, never guessed.
  the zip    downloaded by artifacts.download_zip (the 302 to storage followed without the
             token) and read by artifacts.read_archive as hostile input (sizes, names, links).
             It must hold exactly one *.json file: the run summary, validated by
             results.history.read_summary, whose ci_run id (when present) must be the run's own.
Summaries already in `out` (the same ci_run id, whatever the attempt, or the same content) are
not written twice; the folder itself must be a valid history folder (read strictly). Everything is
downloaded and validated before the first file is written, oldest first, each by
results.history.write_summary (a new name, never an overwrite). A refused artifact stops the
whole fetch with one line naming the run (UserError): nothing is written.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.github import artifacts
from ci_eval.github import client as gh_client
from ci_eval.github.context import DEFAULT_BRANCH_EVENTS
from ci_eval.results import history

DEFAULT_WORKFLOW = "eval.yml"
DEFAULT_LIMIT = 10
SCAN_FACTOR = 10


@dataclass(frozen=True)
class RunNote:
    run_id: int
    run_number: int | None
    created_at: str | None
    outcome: str  # fetched | already | skipped
    detail: str
    file: str | None = None

    def line(self) -> str:
        when = f", {self.created_at[:10]}" if self.created_at else ""
        number = f"#{self.run_number} " if self.run_number is not None else ""
        return f"run {number}({self.run_id}{when}): {self.outcome}: {self.detail}"

    def to_json(self) -> dict:
        return {"run_id": self.run_id, "run_number": self.run_number,
                "created_at": self.created_at, "outcome": self.outcome, "detail": self.detail,
                "file": self.file}


@dataclass
class FetchReport:
    repository: str
    workflow: str
    branch: str
    out: Path
    notes: list[RunNote] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for n in self.notes if n.outcome == outcome)

    def to_json(self) -> dict:
        return {"repository": self.repository, "workflow": self.workflow,
                "branch": self.branch, "out": str(self.out), "runs_considered": len(self.notes),
                "fetched": self.count("fetched"), "already": self.count("already"),
                "skipped": self.count("skipped"), "runs": [n.to_json() for n in self.notes]}


def _log(line: str) -> None:
    print(f"ci-eval: {line}", file=sys.stderr)


def _refusal(exc: gh_client.GitHubError, what: str, field_name: str | None = None) -> UserError:
    return UserError(f"cannot {what}: {' '.join(str(exc).split())[:400]}", field=field_name)


def _select_runs(runs, *, repository: str, branch: str, limit: int) -> list:
    chosen = []
    for scanned, run in enumerate(runs, start=1):
        head_repo = run.head_repository.full_name if run.head_repository else repository
        if (run.event in DEFAULT_BRANCH_EVENTS and run.head_branch == branch
                and run.conclusion == "success" and head_repo == repository):
            chosen.append(run)
        if len(chosen) >= limit or scanned >= limit * SCAN_FACTOR:
            break
    return chosen


def _created(run) -> str | None:
    when = run.created_at
    return when.isoformat().replace("+00:00", "Z") if when is not None else None


def _summary_from_zip(data: bytes, run, label: str) -> history.RunSummary:
    try:
        files = artifacts.read_archive(data)
    except artifacts.UnsafeArchive as exc:
        raise UserError(f"refused: {exc}", path=label) from None
    names = [name for name, _content in files]
    if len(files) != 1 or "/" in names[0] or not names[0].endswith(".json"):
        raise UserError(f"refused: expected exactly one run summary *.json at the top of the "
                        f"archive, found {names[:5]!r}", path=label)
    (name, content), = files
    with tempfile.TemporaryDirectory(prefix="ci-eval-fetch-") as tmp:
        staged = Path(tmp) / name
        staged.write_bytes(content)
        try:
            summary = history.read_summary(staged)
        except UserError as exc:
            raise UserError(str(exc).replace(tmp, label)) from None
    ci_run = summary.ci_run or {}
    if "id" in ci_run and ci_run["id"] != run.id:
        raise UserError(f"refused: holds the summary of run {ci_run['id']}, not of run {run.id}",
                        path=f"{label}/{name}", field="$.ci_run.id")
    return summary


def _run_key(summary: history.RunSummary) -> int | None:
    """The Actions run a summary belongs to. A run counts once, whatever its attempt: a re-run's
    summary replaces the artifact on GitHub, but one already fetched stays as it is."""
    ci_run = summary.ci_run or {}
    return ci_run.get("id")


def _artifact_zip(client: gh_client.Client, run, label: str, note, log) -> bytes | None:
    """The zip of a run's history artifact, None (a note logged) when it has none or it
    expired; UserError when it is too big or unsafe, or GitHub refuses."""
    def listed() -> list:
        return [a for a in run.get_artifacts() if a.name == artifacts.HISTORY_ARTIFACT]

    try:
        named = gh_client.call(listed, describe=f"list the artifacts of run {run.id}")
    except gh_client.GitHubError as exc:
        raise _refusal(exc, f"list the artifacts of run {run.id}") from None
    if not named:
        log(note("skipped", f"no {artifacts.HISTORY_ARTIFACT} artifact (the run recorded no "
                 "history)").line())
        return None
    artifact = named[0]
    if artifact.expired:
        log(note("skipped", "the artifact has expired (GitHub keeps artifacts 90 days by "
                 "default)").line())
        return None
    if (artifact.size_in_bytes or 0) > artifacts.MAX_ZIP_BYTES:
        raise UserError(f"refused: {artifact.size_in_bytes} bytes, more than the "
                        f"{artifacts.MAX_ZIP_BYTES} ci-eval accepts", path=label)
    try:
        data = artifacts.download_zip(client, artifact.archive_download_url,
                                      describe=f"download the {label}")
    except artifacts.ArtifactExpired:
        log(note("skipped", "the artifact has expired (GitHub answered 410 Gone)").line())
        return None
    except artifacts.UnsafeArchive as exc:
        raise UserError(f"refused: {exc}", path=label) from None
    except gh_client.GitHubError as exc:
        raise _refusal(exc, f"download the {label}") from None
    return data


def fetch_history(client: gh_client.Client, repository: str, *, out: Path,
                  workflow: str = DEFAULT_WORKFLOW, branch: str | None = None,
                  limit: int = DEFAULT_LIMIT,
                  log: Callable[[str], None] = _log) -> FetchReport:
    """Download, validate and write the summaries (see the module docstring)."""
    out = Path(out)
    existing = history.load_history(out, missing_ok=True)
    known_runs = {key for s in existing if (key := _run_key(s))}
    known_texts = {history.dumps_summary(s) for s in existing}  # the file name is not in it
    repo = client.github.get_repo(repository)
    if branch is None:
        try:
            branch = gh_client.call(lambda: repo.default_branch,
                                    describe=f"read the default branch of {repository}")
        except gh_client.GitHubError as exc:
            raise _refusal(exc, f"read the repository {repository}", "--repo") from None
    report = FetchReport(repository, workflow, branch, out)
    try:
        runs = gh_client.call(
            lambda: _select_runs(repo.get_workflow(workflow).get_runs(branch=branch,
                                                                      status="success"),
                                 repository=repository, branch=branch, limit=limit),
            describe=f"list the successful runs of {workflow} on {branch}")
    except gh_client.GitHubError as exc:
        hint = " (is it the file name of the eval workflow?)" if exc.status == 404 else ""
        raise _refusal(exc, f"list the runs of the workflow {workflow}{hint}",
                       "--workflow") from None
    if not runs:
        log(f"no successful run of {workflow} on {branch} in {repository}: nothing to fetch")
    found: list[tuple[history.RunSummary, int]] = []
    for run in runs:
        label = f"artifact {artifacts.HISTORY_ARTIFACT} of run {run.id}"

        def note(outcome: str, detail: str, file: str | None = None, run=run) -> RunNote:
            made = RunNote(run.id, run.run_number, _created(run), outcome, detail, file)
            report.notes.append(made)
            return made

        data = _artifact_zip(client, run, label, note, log)
        if data is None:
            continue
        summary = _summary_from_zip(data, run, label)
        text = history.dumps_summary(summary)
        if _run_key(summary) in known_runs or text in known_texts:
            log(note("already", f"already in {out}").line())
            continue
        if key := _run_key(summary):
            known_runs.add(key)
        known_texts.add(text)
        log(note("fetched", f"{summary.date}, commit {(summary.commit or 'none')[:12]}, "
                 f"{len(summary.tasks)} task(s)").line())
        found.append((summary, len(report.notes) - 1))
    for summary, index in sorted(found, key=lambda pair: pair[0].sort_key()):
        written = history.write_summary(out, summary)
        report.notes[index] = replace(report.notes[index], file=written.name)
    return report
