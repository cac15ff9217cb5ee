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
from ci_eval.generate.candidate import Context
from ci_eval.generate.probe import Prober
from ci_eval.generate.session import Session, Summary, state_dir
from ci_eval.output import ensure_dir
from ci_eval.run.sandbox.isolation import Isolation


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


def _context(options: Options, isolation: Isolation) -> Context:
    repo = Path(options.repo)
    if not repo.exists():
        raise UserError("no such repository (expected a git repository folder or bundle)",
                        path=repo, field="REPO")
    options.into = Path(options.into).absolute()  # the checks run elsewhere: no relative path
    into = ensure_dir(options.into, field="--into")
    state = ensure_dir(state_dir(into))
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
    return Context(bare=bare, repo_name=name, isolation=isolation,
                   prober=Prober(work / "probes", isolation, timeout=options.timeout),
                   work=work, created=options.today.isoformat(),
                   pytest_args=list(options.pytest_args), limits=options.limits,
                   timeout=options.timeout)


def from_history(options: Options, isolation: Isolation, stream=None) -> Summary:
    ctx = _context(options, isolation)
    try:
        try:
            found = history.scan(ctx, options.rev, options.since, options.limit)
        except gitsource.GitSourceError as exc:
            raise UserError(str(exc), path=options.repo, field="--rev") from None
        by_key = {commit.sha: commit for commit in found}
        session = Session(options.into, Summary(ctx.repo_name, "history"), jobs=options.jobs,
                          root=options.root, stream=stream)
        return session.run(list(by_key), lambda key: history.mine_commit(ctx, by_key[key]))
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)


def from_commit(options: Options, isolation: Isolation, rev: str, stream=None) -> Summary:
    ctx = _context(options, isolation)
    try:
        try:
            commit = history.one(ctx, rev)
        except gitsource.GitSourceError as exc:
            raise UserError(str(exc), path=options.repo, field="--from-commit") from None
        session = Session(options.into, Summary(ctx.repo_name, "history"), jobs=1,
                          root=options.root, stream=stream)
        return session.run([commit.sha], lambda key: history.mine_commit(ctx, commit))
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)


def from_mutations(options: Options, isolation: Isolation, stream=None) -> Summary:
    ctx = _context(options, isolation)
    try:
        try:
            head = gitsource.resolve(ctx.bare, options.rev or "refs/mined/HEAD")
        except gitsource.GitSourceError as exc:
            raise UserError(str(exc), path=options.repo, field="--rev") from None
        plan = mutations.plan(ctx, head, options.limit)
        session = Session(options.into, Summary(ctx.repo_name, "mutations"), jobs=options.jobs,
                          root=options.root, stream=stream)
        return session.run(plan.keys(), plan.mine)
    finally:
        shutil.rmtree(ctx.work, ignore_errors=True)
