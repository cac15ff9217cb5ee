"""`ci-eval generate`'s stage: the repository cloned into DIR/.ci-eval-generate/ (ours, its
configuration never read), the candidates of the chosen source mined in a Session, the scratch
folders removed. What the command calls."""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.generate import decide, gitsource, history, mutations
from ci_eval.generate.candidate import MiningContext
from ci_eval.generate.probe import Prober
from ci_eval.generate.session import Session, Summary, state_dir
from ci_eval.output import ensure_dir
from ci_eval.run.sandbox.isolation import Isolation
from ci_eval.tasks.model import tasks_dir


@dataclass
class Options:
    repo: Path
    into: Path
    root: Path | None = None  # the suite whose task numbers the new tasks must not take
    jobs: int = 1
    limit: int | None = None
    since: str | None = None
    rev: str | None = None
    timeout: float = 120.0
    pytest_args: list[str] = field(default_factory=list)
    limits: decide.Limits = field(default_factory=decide.Limits)
    today: dt.date = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).date())


def _context(options: Options, isolation: Isolation) -> MiningContext:
    repo = Path(options.repo)
    if not repo.exists():
        raise UserError("no such repository (expected a git repository folder or bundle)",
                        path=repo, field="REPO")
    options.into = Path(options.into).absolute()  # the checks run elsewhere: no relative path
    state = ensure_dir(state_dir(ensure_dir(options.into, field="--into")))
    work = state / "work"
    shutil.rmtree(work, ignore_errors=True)  # what a killed run left half-made
    work.mkdir()
    try:
        bare = gitsource.mirror(repo, state / "mirror.git")
    except gitsource.GitSourceError as exc:
        raise UserError(str(exc), path=repo, field="REPO") from None
    name = repo.resolve().name.removesuffix(".bundle").removesuffix(".git")
    if name in ("repo", ""):
        name = repo.resolve().parent.name.split("+")[-1]
    return MiningContext(bare=bare, repo_name=name, isolation=isolation,
                   prober=Prober(work / "probes", isolation, timeout=options.timeout),
                   work=work, created=options.today.isoformat(),
                   pytest_args=list(options.pytest_args), limits=options.limits,
                   timeout=options.timeout)


def _mine(options: Options, isolation: Isolation, mode: str, plan, stream,
          rev_field: str = "--rev") -> Summary:
    """plan(ctx) -> (keys, mine). On bad input a DIR this invocation made is removed again:
    nothing half-written."""
    into = Path(options.into).resolve()
    if options.root is not None and (into in (Path(options.root).resolve(), tasks_dir(
            options.root).resolve()) or into.parent == tasks_dir(options.root).resolve()):
        raise UserError("candidates are for review: give a folder other than the suite's own "
                        "(e.g. generated/)", path=options.into, field="--into")
    fresh = not into.exists()
    ctx = None
    try:
        ctx = _context(options, isolation)
        try:
            keys, mine = plan(ctx)
        except gitsource.GitSourceError as exc:
            raise UserError(str(exc), path=options.repo, field=rev_field) from None
        session = Session(options.into, Summary(ctx.repo_name, mode), jobs=options.jobs,
                          root=options.root, stream=stream)
        return session.run(keys, mine)
    except UserError:
        if fresh:
            shutil.rmtree(options.into, ignore_errors=True)
        raise
    finally:
        if ctx is not None:
            shutil.rmtree(ctx.work, ignore_errors=True)


def from_history(options: Options, isolation: Isolation, stream=None) -> Summary:
    def plan(ctx: MiningContext):
        found = {c.sha: c for c in history.scan(ctx, options.rev, options.since, options.limit)}
        return list(found), lambda key: history.mine_commit(ctx, found[key])

    return _mine(options, isolation, "history", plan, stream)


def from_commit(options: Options, isolation: Isolation, rev: str, stream=None) -> Summary:
    """One commit (`ci-eval new-task --from-commit`)."""
    def plan(ctx: MiningContext):
        commit = history.one(ctx, rev)
        return [commit.sha], lambda key: history.mine_commit(ctx, commit)

    return _mine(options, isolation, "history", plan, stream, rev_field="--from-commit")


def from_mutations(options: Options, isolation: Isolation, stream=None) -> Summary:
    def plan(ctx: MiningContext):
        head = gitsource.resolve(ctx.bare, options.rev or "refs/mined/HEAD")
        planned = mutations.plan(ctx, head, options.limit)
        return planned.keys(), planned.mine

    return _mine(options, isolation, "mutations", plan, stream)
