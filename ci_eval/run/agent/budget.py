"""Spending limits enforced while tasks run (the limits are agents/budget.py's Budget).

Agent runs (attempts, retries included) are counted as they start, costs as they are recorded.
Once a limit is reached no new attempt starts; the runs not started are not recorded, and tasks
left short of their runs are inconclusive with the reason "budget reached: ...". A run in flight
is never killed for the budget (its cost is only known when it ends), so the last runs may go
over a cost limit by what they cost.
"""

from __future__ import annotations

import threading

from ci_eval.agents.budget import Budget


def refusal(budget: Budget, started: int, spent: float, costliest_run: float) -> str | None:
    """Why no further agent run may start (pure), or None."""
    if budget.max_runs is not None and started >= budget.max_runs:
        return f"budget reached: {started} agent run(s) started (max_runs {budget.max_runs})"
    if budget.max_cost_usd is not None and spent >= budget.max_cost_usd:
        return f"budget reached: ${spent:.2f} spent (max_cost_usd {budget.max_cost_usd:g})"
    if budget.max_cost_usd_per_run is not None and costliest_run > budget.max_cost_usd_per_run:
        return (f"budget reached: a run cost ${costliest_run:.2f} (max_cost_usd_per_run "
                f"{budget.max_cost_usd_per_run:g})")
    return None


class RunBudget:
    def __init__(self, budget: Budget):
        self.budget = budget
        self._lock = threading.Lock()
        self.started = 0
        self.spent = 0.0
        self.costliest = 0.0
        self.reason: str | None = None  # set once a limit stopped a run from starting

    def try_start(self) -> str | None:
        """Count one agent run as started; or the refusal, when a limit is reached."""
        with self._lock:
            why = refusal(self.budget, self.started, self.spent, self.costliest)
            if why:
                self.reason = self.reason or why
                return why
            self.started += 1
            return None

    def charge(self, run_cost: float | None) -> None:
        if run_cost is None:
            return
        with self._lock:
            self.spent += run_cost
            self.costliest = max(self.costliest, run_cost)
