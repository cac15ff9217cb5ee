"""What `ci-eval run` does with what the results folder already holds, by --resume / --fresh:
checked first (every refusal before anything is touched), then discarded or repaired."""

from __future__ import annotations

import sys
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.results import store as results
from ci_eval.results.control_arm import control_dir
from ci_eval.run.control_ref import take_over_control
from ci_eval.run.resume import check_resumable, leftover_results, read_recorded
from ci_eval.tasks.model import Task


def take_over(tasks: list[Task], all_task_ids: set[str], out_dir: Path, agent_identity: str,
              *, resume: bool, fresh: bool) -> dict:
    """Check what out_dir already holds for these tasks against --resume / --fresh, then (every
    refusal behind us) discard or repair it. Returns the results files being resumed."""
    existing = [t.id for t in tasks if results.results_path(out_dir, t.id).exists()]
    removed, foreign = leftover_results(out_dir, {t.id for t in tasks}, all_task_ids,
                                        agent_identity)
    if foreign:
        path, agent = foreign[0]
        raise UserError(f"holds runs of agent {agent!r}, this run uses {agent_identity!r}; a "
                        "results folder holds one agent's runs (report and compare would refuse "
                        "it): use another --out, or remove the file", path=path, field="--out")
    if removed and not fresh:
        raise UserError(f"results of {removed[0].stem}, which tasks/ no longer holds (report and "
                        "compare would count them): --fresh removes them, or remove the file",
                        path=removed[0], field="--out")
    resumed = {}
    if existing and resume:
        resumed = read_recorded(tasks, out_dir, allow_torn_tail=True)
        check_resumable(tasks, resumed, agent_identity)
    elif existing and not fresh:
        raise UserError(f"results already recorded for {len(existing)} task(s), e.g. {existing[0]} "
                        "(use --resume to continue them or --fresh to discard them)", path=out_dir)
    if fresh:
        for task_id in existing:
            results.results_path(out_dir, task_id).unlink()
        for path in removed:
            path.unlink()
            print(f"ci-eval: removed {path}: its task is no longer in tasks/", file=sys.stderr)
    for found in resumed.values():
        results.drop_torn_tail(found)
    return resumed


def take_over_control_arm(tasks: list[Task], out_dir: Path, arm_and_hook, *, resume: bool,
                          fresh: bool):
    """The control folder settled (run/control_ref.take_over_control): (arm, hook, what it
    recorded before), or None without a control arm."""
    identity = arm_and_hook[0].agent.identity if arm_and_hook else None
    recorded = take_over_control(tasks, control_dir(out_dir), identity, resume=resume,
                                 fresh=fresh)
    return (*arm_and_hook, recorded) if arm_and_hook else None
