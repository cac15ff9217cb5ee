"""A run's record sums the usage of every attempt (issue #20 item 7): input, output, cached and
cache-write tokens and cost alike; earlier attempts' cost is also in retried_cost_usd."""

from __future__ import annotations

import random
from types import SimpleNamespace

from ci_eval.run import runner
from ci_eval.run.attempt import AttemptOutcome


class _Budget:
    def try_start(self):
        return None

    def charge(self, cost):
        pass


def test_every_usage_field_is_summed_over_attempts(tmp_path, monkeypatch):
    usage = {"tokens": 2518, "input_tokens": 2468, "output_tokens": 50,
             "cached_input_tokens": 100, "cache_write_tokens": 40, "cost_usd": 0.01}
    attempts = iter([
        AttemptOutcome({**usage, "status": "error", "reason": "rate limit"}, retryable=True),
        AttemptOutcome({**usage, "status": "pass", "reason": ""}),
    ])
    monkeypatch.setattr(runner, "run_attempt", lambda task, run_no, attempt, ctx, turn=None: next(attempts))
    ctx = SimpleNamespace(max_attempts=3, budget=_Budget(), out_dir=tmp_path, rng=random.Random(1),
                          backoff_base=0.0)
    record = runner.run_one(SimpleNamespace(id="task-001-x"), 1, ctx)
    assert record["status"] == "pass" and record["retried_errors"] == ["rate limit"]
    assert {name: record[name] for name in usage} == {
        "tokens": 5036, "input_tokens": 4936, "output_tokens": 100, "cached_input_tokens": 200,
        "cache_write_tokens": 80, "cost_usd": 0.02}
    assert record["retried_cost_usd"] == 0.01
