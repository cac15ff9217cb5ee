"""Where the harness's time per run goes: wall milliseconds per run of each stage of
`ci-eval run -j 1`, for the per_sample_ratio gap of bench/overhead.py.

Builds overhead.py's trivial task in a temp repo and runs the real CLI in this process
(`main(["run", "-k", K, "-j", "1", ...])`) with the runner's stage functions wrapped by a timer;
nothing else is changed. Stages: workspace (copy, pristine, prompt), agent (its sandbox, bash),
diff (the harness's own), checks (their sandbox and checks.py), and the rest of a run (results
line, log, bookkeeping). The first run of the task is left out (the launchers start there).
Cleanup runs on a background thread and is not in any stage.

Run: python bench/stages.py [--json] [-k 40]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from overhead import AGENT, make_task  # noqa: E402  (this folder's script)

from ci_eval import main as cli  # noqa: E402
from ci_eval.run import attempt, runner, runners  # noqa: E402

# (module, function) -> stage: each wrapped where its caller looks it up (the local runner calls
# runners.run_agent; run_one calls runner.run_attempt; the rest are attempt's)
STAGES = {(runners, "run_agent"): "agent", (attempt, "workspace_diff"): "diff",
          (attempt, "checks_with_retries"): "checks", (runner, "run_attempt"): "run"}


def timed(samples: dict, name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            samples[name].append((time.perf_counter() - started) * 1000)
    return wrapper


def measure(k: int) -> dict:
    base = Path(tempfile.mkdtemp(prefix="ci-eval-stages-"))
    samples: dict[str, list[float]] = defaultdict(list)
    originals = {(module, name): getattr(module, name) for module, name in STAGES}
    try:
        make_task(base / "tasks", 1)
        for (module, name), stage in STAGES.items():
            setattr(module, name, timed(samples, stage, originals[module, name]))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["--root", str(base), "run", "-k", str(k), "-j", "1", "--out",
                             str(base / "results"), "--agent-cmd", AGENT])
        if code != 0:
            raise SystemExit(f"ci-eval run exited {code}")
    finally:
        for (module, name), function in originals.items():
            setattr(module, name, function)
        shutil.rmtree(base, ignore_errors=True)
    medians = {stage: statistics.median(values[1:]) for stage, values in samples.items()}
    inner = sum(medians[s] for s in ("agent", "diff", "checks"))
    return {"runs": k, "run_ms": round(medians["run"], 2),
            "agent_ms": round(medians["agent"], 2), "checks_ms": round(medians["checks"], 2),
            "diff_ms": round(medians["diff"], 2),
            "workspace_and_rest_ms": round(medians["run"] - inner, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("-k", type=int, default=40, help="runs of the task (default 40)")
    args = parser.parse_args()
    if args.k < 3:
        parser.error("-k must be at least 3")
    figures = measure(args.k)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"per run (median of {args.k - 1}): {figures['run_ms']} ms = agent "
          f"{figures['agent_ms']} + checks {figures['checks_ms']} + diff {figures['diff_ms']}"
          f" + workspace and the rest {figures['workspace_and_rest_ms']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
