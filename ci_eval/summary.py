"""Per-task summary of run records (pure): the numbers every report and the gate start from."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from ci_eval import stats

VALID_STATUSES = ("pass", "fail", "timeout")  # timeout counts as a fail; error is excluded


@dataclass(frozen=True)
class TaskSummary:
    task: str
    requested: int  # runs asked for (k); max(k, recorded runs)
    runs: int  # valid runs (pass/fail/timeout)
    passes: int
    fails: int
    timeouts: int
    errors: int
    pass_rate: Fraction | None
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    k: int  # the k used for pass@k / pass^k (min(requested k, runs))
    mean_tokens: float | None
    mean_wall_seconds: float | None
    p95_wall_seconds: float | None
    total_cost_usd: float | None
    error_reasons: tuple[str, ...]
    agents: tuple[str, ...]

    @property
    def inconclusive(self) -> bool:
        """Fewer valid runs than asked for: never read as a pass."""
        return self.runs < self.requested

    def to_json(self) -> dict:
        data = asdict(self)
        data["pass_rate"] = float(self.pass_rate) if self.pass_rate is not None else None
        data["error_reasons"] = list(self.error_reasons)
        data["agents"] = list(self.agents)
        data["inconclusive"] = self.inconclusive
        return data


def summarize(task: str, records: list[dict], k: int | None = None) -> TaskSummary:
    """Summarize one task's records (one per run). k defaults to the number of recorded runs."""
    requested = max(k or 0, len(records))
    valid = [r for r in records if r["status"] in VALID_STATUSES]
    passes = sum(1 for r in valid if r["status"] == "pass")
    n = len(valid)
    used_k = min(k or n, n)
    tokens = [r["tokens"] for r in valid if r.get("tokens") is not None]
    walls = [float(r["wall_seconds"]) for r in valid if r.get("wall_seconds") is not None]
    costs = [r["cost_usd"] for r in records if r.get("cost_usd") is not None]
    return TaskSummary(
        task=task,
        requested=requested,
        runs=n,
        passes=passes,
        fails=sum(1 for r in valid if r["status"] == "fail"),
        timeouts=sum(1 for r in valid if r["status"] == "timeout"),
        errors=sum(1 for r in records if r["status"] == "error"),
        pass_rate=stats.pass_rate(passes, n),
        pass_at_1=stats.pass_at_k(n, passes, 1) if n else None,
        pass_at_k=stats.pass_at_k(n, passes, used_k) if n else None,
        pass_hat_k=stats.pass_hat_k(n, passes, used_k) if n else None,
        k=used_k,
        mean_tokens=stats.mean(tokens),
        mean_wall_seconds=stats.mean(walls),
        p95_wall_seconds=stats.percentile(walls, 95),
        total_cost_usd=sum(costs) if costs else None,
        error_reasons=tuple(r.get("reason", "") for r in records if r["status"] == "error"),
        agents=tuple(sorted({r["agent"] for r in records})),
    )
