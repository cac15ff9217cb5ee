"""The run summary of one run's results (pure): what `ci-eval history record` and the report
job on the default branch write into the history, built once for both."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from ci_eval import __version__
from ci_eval.results import history
from ci_eval.results.history import RunSummary
from ci_eval.results.summary import summarize_results
from ci_eval.verdict.harness_changes import recorded_harness


def summary_of_results(loaded: Mapping, *, k: int | None, day: dt.date, now: dt.datetime,
                       commit: str | None, agent: str | None, harness_files,
                       ci_run: Mapping | None, gate: Mapping[str, str] | None = None,
                       drift: Mapping[str, tuple[bool, int, int]] | None = None) -> RunSummary:
    """`loaded`: results.stream.require_runs of a results folder; `harness_files`: the agent's
    harness files now (agents.harness_of), None when unknown; `gate` and `drift` as
    history.build_summary takes them."""
    harness, _note = recorded_harness({d for runs in loaded.values() for d in runs.harnesses},
                                      harness_files)
    return history.build_summary(
        summarize_results(loaded, k),
        date=day.isoformat(),
        recorded_at=history.utc_timestamp(now),
        commit=commit,
        agent=agent,
        ci_eval_version=__version__,
        gate=gate,
        ci_run=ci_run,
        harness=harness.to_json() if harness else None,
        drift=drift,
    )
