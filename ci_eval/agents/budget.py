"""Spending limits for one `ci-eval run` invocation, from ci-eval.yaml's `budget:` (the command
line may override each one):

    budget:
      max_cost_usd: 20           # all runs of the invocation together (confirmation runs too)
      max_cost_usd_per_run: 2    # one run (every attempt of it) costing this much
      max_runs: 50               # agent runs started, retries included

When a limit is reached no new run starts; tasks left short of runs are inconclusive with reason
"budget reached". This module holds the validated values only; the runner enforces them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ci_eval.agents.values import positive_number, whole_number


@dataclass(frozen=True)
class Budget:
    max_cost_usd: float | None = None
    max_cost_usd_per_run: float | None = None
    max_runs: int | None = None

    def overridden(self, **values: float | None) -> Budget:
        """This budget with the given limits replaced, except those given as None."""
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise TypeError(f"unknown budget limit(s): {', '.join(sorted(unknown))}")
        changes: dict[str, Any] = {k: v for k, v in values.items() if v is not None}
        return replace(self, **changes)

    @property
    def unlimited(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))


def parse_budget(value: Any, path: Path | str) -> Budget:
    """`budget:` (its keys and types checked by ci-eval.schema.json first) -> Budget."""
    if value is None:
        return Budget()
    budget = Budget()
    if "max_cost_usd" in value:
        budget = replace(budget, max_cost_usd=positive_number(
            value["max_cost_usd"], path, "budget.max_cost_usd"))
    if "max_cost_usd_per_run" in value:
        budget = replace(budget, max_cost_usd_per_run=positive_number(
            value["max_cost_usd_per_run"], path, "budget.max_cost_usd_per_run"))
    if "max_runs" in value:
        budget = replace(budget, max_runs=whole_number(value["max_runs"], path, "budget.max_runs"))
    return budget
