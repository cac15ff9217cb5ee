"""Candidates from synthesized bugs: mutants (mutants.py) of the functions the tests reach, one
bug per candidate. The mutated tree is the base, the way back to the original the solution; the
original tree's suite runs once (twice) for all of them. A function's mutants are probed
together, so each kept one gets its siblings that break its tests as negatives (plausible wrong
fixes `verify` must refuse)."""

from __future__ import annotations

import ast
import hashlib
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.generate import decide, gitsource, mutants
from ci_eval.generate.candidate import RUNS_PER_STATE, Candidate, MiningContext, file_patch, stage
from ci_eval.generate.probe import Probe
from ci_eval.run.workspace.build import special_files

MAX_NEGATIVES = 3
PER_TURN = 2  # mutants of a function taken at once: each has a sibling to be its negative


@dataclass
class Planned:
    key: str
    path: str  # the file mutated
    group: str  # path::function: the mutants probed together
    mutant: mutants.Mutant


@dataclass
class Plan:
    ctx: MiningContext
    tree: Path  # the original tree
    planned: dict[str, Planned] = field(default_factory=dict)
    _original: list[Probe] | None = None
    _groups: dict[str, dict[str, list[Probe]]] = field(default_factory=dict)
    _locks: dict[str, threading.Lock] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def keys(self) -> list[str]:
        return list(self.planned)

    def original(self) -> list[Probe]:
        with self._lock:
            if self._original is None:
                self._original = self.ctx.prober.run(self.tree, [], self.ctx.pytest_args,
                                                     times=RUNS_PER_STATE)
            return self._original

    def mutated_tree(self, planned: Planned, into: Path) -> Path:
        shutil.copytree(self.tree, into, symlinks=False)
        (into / planned.path).write_text(planned.mutant.source, encoding="utf-8")
        return into

    def group_probes(self, group: str) -> dict[str, list[Probe]]:
        with self._lock:
            lock = self._locks.setdefault(group, threading.Lock())
        with lock:
            if group not in self._groups:
                probes = {}
                for planned in (p for p in self.planned.values() if p.group == group):
                    work = self.ctx.scratch(planned.key)
                    try:
                        tree = self.mutated_tree(planned, work / "tree")
                        probes[planned.key] = self.ctx.prober.run(
                            tree, [], self.ctx.pytest_args, times=RUNS_PER_STATE)
                    finally:
                        shutil.rmtree(work, ignore_errors=True)
                self._groups[group] = probes
            return self._groups[group]

    def mine(self, key: str) -> Candidate:
        planned = self.planned[key]
        original = self.original()
        at_base = self.group_probes(planned.group)[key]
        for probe in original + at_base:
            if probe.timed_out:
                return Candidate(key, decide.TIMED_OUT, probe.problem[:300])
            if probe.outcomes is None:
                return Candidate(key, decide.NO_EVIDENCE, probe.problem[:300])
        judged = decide.judge_mutant(  # every probe has outcomes here (checked above)
            [p.outcomes for p in original if p.outcomes is not None],
            [p.outcomes for p in at_base if p.outcomes is not None])
        if judged.reason:
            return Candidate(key, judged.reason, judged.detail[:300])
        source = (self.tree / planned.path).read_text(encoding="utf-8")
        mutant = planned.mutant
        solution = file_patch(planned.path, mutant.source, source)
        negatives = self.negatives(planned, judged.fail_to_pass + judged.pass_to_pass)
        origin = {"source": "mutation", "repo": self.ctx.repo_name, "file": planned.path,
                  "function": mutant.function, "operator": mutant.operator,
                  "line": mutant.line, "change": mutant.description,
                  "negatives": sorted(negatives)}
        name = mutants.slug(f"{self.ctx.repo_name}-{mutant.function.split('.')[-1]}-"
                            f"{mutant.operator}-{key[2:8]}")[:60].strip("-")
        work = self.ctx.scratch(key)
        try:
            base = self.mutated_tree(planned, work / "tree")
            return stage(self.ctx, key, name, base, solution, judged, at_base[0].summary,
                         origin, negatives)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def negatives(self, planned: Planned, gated: list[str]) -> dict[str, bytes]:
        """The function's other mutants that break some of the task's tests in every run:
        each as a patch from this mutant's file to that one's."""
        found: dict[str, bytes] = {}
        gated_set = set(gated)
        for key, probes in self.group_probes(planned.group).items():
            other = self.planned[key]
            runs = [p.outcomes for p in probes if p.outcomes is not None]
            if key == planned.key or len(runs) < len(probes):
                continue
            broken = [{t for t, o in run.items() if o in decide.RED and t in gated_set}
                      | {t for t in gated_set if t not in run} for run in runs]
            if all(broken) and len(found) < MAX_NEGATIVES:
                name = f"{other.mutant.operator}-line{other.mutant.line}-{key[2:8]}.patch"
                found[name] = file_patch(planned.path, planned.mutant.source,
                                         other.mutant.source)
        return found


def plan(ctx: MiningContext, head: str, limit: int | None) -> Plan:
    """The mutants to try at commit `head`: for each function the tests reach, the first
    mutant of each operator, taken function by function in turns of two (so that --limit N
    spreads over many functions, and each mutant has a sibling that can be its negative)."""
    tree = ctx.work / "head"
    gitsource.write_tree(ctx.bare, head, tree)
    result = Plan(ctx, tree)
    if special_files(tree):
        return result
    sources, test_names = {}, set()
    for path in sorted(p for p in tree.rglob("*.py") if p.is_file()):
        rel = path.relative_to(tree).as_posix()
        try:
            parsed = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        if decide.is_test_path(rel):
            test_names |= mutants.names_used(parsed)
        elif decide.is_source_path(rel):
            sources[rel] = parsed
    reach = mutants.reached(test_names, sources)
    per_function = []
    for rel, parsed in sources.items():
        text = (tree / rel).read_text(encoding="utf-8")
        for function in mutants.functions(parsed):
            if (rel, function.qualname) in reach:
                chosen = mutants.pick(mutants.mutants(text, function))
                per_function.append([(rel, function.qualname, m) for m in chosen])
    order = [item for turn in range(0, len(mutants.OPERATORS), PER_TURN)
             for group in per_function for item in group[turn:turn + PER_TURN]]
    for rel, qualname, mutant in order[:limit]:
        ident = f"{head}:{rel}:{qualname}:{mutant.operator}:{mutant.line}:{mutant.description}"
        key = "m-" + hashlib.sha256(ident.encode()).hexdigest()[:16]
        result.planned[key] = Planned(key, rel, f"{rel}::{qualname}", mutant)
    return result
