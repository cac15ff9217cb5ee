"""compare on a large suite: time and peak memory of the real CLI, as the number of runs grows.

Generates (in a temp folder) a repo of 1,000 tasks with a baseline.json entry each, and results
of 10 and of 100 runs per task, every line a full record as `ci-eval run` writes it, with a diff
of --diff-bytes (default 4 KiB, a typical agent change; the cap is 64 KiB). Then times
`ci-eval compare --format markdown` as a subprocess (best of --repeat) and reads its peak RSS
from the kernel (wait4 rusage of that process).
  compare_1000x10_s      target <= 1.0 s
  compare_1000x100_s     target <= 3 s
  peak_rss_mb_1000x100   target <= 120 MB, whatever the diff sizes: --big-diffs also measures
                         1,000 x 20 runs with 64 KiB diffs (1.3 GB of results), whose peak RSS
                         must be that of the small diffs (the diff text is never held)

Run: python bench/scale.py [--json] [--diff-bytes 4096] [--repeat 3] [--big-diffs]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = 1000
AGENT = "claude-code"
PROMPT = "Fix the bug described in the issue.\n"
PROMPT_HASH = "sha256:" + hashlib.sha256(PROMPT.encode()).hexdigest()
METADATA = {"difficulty": 2, "area": "bench", "tags": ["scale"], "created": "2026-01-01"}
REASONS = ("FAIL: tests/test_x.py::test_new FAILED (fail_to_pass)",
           "FAIL: src/app.py: no match for 'def handler'",
           "agent ran out of time (600s)")


def task_id(number: int) -> str:
    return f"task-{number:04d}-scale"


def make_repo(root: Path) -> None:
    """1,000 task folders and a baseline.json recorded at 0.8 for each."""
    tasks = root / "tasks"
    meta = json.dumps(METADATA)
    for number in range(1, TASKS + 1):
        folder = tasks / task_id(number)
        (folder / "repo-state").mkdir(parents=True)
        (folder / "repo-state" / "app.py").write_text("x = 1\n")
        (folder / "prompt.md").write_text(PROMPT)
        (folder / "checks.py").write_text("import sys\nsys.exit(0)\n")
        (folder / "metadata.json").write_text(meta)
    entries = {task_id(n): {"passes": 32, "runs": 40, "pass_rate": 0.8, "avg_tokens": 12000.0,
                            "avg_wall_seconds": 95.0, "recorded": "2026-01-01",
                            "prompt_hash": PROMPT_HASH, "aspirational": False,
                            "observations": [{"recorded": "2026-01-01", "passes": 32, "runs": 40}]}
               for n in range(1, TASKS + 1)}
    (root / "baseline.json").write_text(json.dumps(
        {"schema_version": 2, "agent": AGENT, "tasks": entries}, indent=2, sort_keys=True))


def a_diff(size: int) -> str:
    """Git-style diff text of about `size` characters."""
    hunk = ("diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n"
            "@@ -10,7 +10,7 @@ def handler(request):\n     \"\"\"Handle it.\"\"\"\n"
            "-    return request.get('id')\n+    return request.get(\"id\", None)\t# fixed\n")
    return (hunk * (size // len(hunk) + 1))[:size]


def make_results(folder: Path, runs: int, diff_bytes: int, seed: int = 7) -> int:
    """`runs` records per task as `ci-eval run` writes them; the bytes written."""
    folder.mkdir(parents=True)
    rng = random.Random(seed)
    diff = a_diff(diff_bytes)
    written = 0
    for number in range(1, TASKS + 1):
        task = task_id(number)
        lines = []
        for run in range(1, runs + 1):
            status = "pass" if rng.random() < 0.8 else rng.choice(("fail", "fail", "timeout"))
            record = {
                "agent": AGENT, "agent_exit_code": 0, "agent_outcome": {"subtype": "success",
                                                                        "num_turns": 12},
                "agent_seconds": round(rng.uniform(30, 200), 3), "attempt": 1,
                "checks_seconds": round(rng.uniform(0.5, 5), 3),
                "cost_usd": round(rng.uniform(0.01, 0.5), 6), "diff": diff,
                "diff_truncated": False, "input_tokens": rng.randrange(5000, 20000),
                "isolation": "agent-sandbox,checks-sandbox", "k": runs,
                "output_tokens": rng.randrange(500, 3000), "passed": status == "pass",
                "prompt_hash": PROMPT_HASH, "reason": "" if status == "pass" else rng.choice(REASONS),
                "requested": runs, "retried_errors": [], "run": run, "status": status,
                "task": task, "timestamp": "2026-01-02T03:04:05Z", "tokens": None,
                "wall_seconds": round(rng.uniform(35, 210), 3),
            }
            record["tokens"] = record["input_tokens"] + record["output_tokens"]
            lines.append(json.dumps(record, sort_keys=True, ensure_ascii=False))
        text = "\n".join(lines) + "\n"
        (folder / f"{task}.jsonl").write_text(text)
        written += len(text)
    return written


def compare(root: Path, results: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of one `ci-eval compare --format markdown`."""
    argv = [sys.executable, "-m", "ci_eval", "compare", "--root", str(root), "--results",
            results, "--format", "markdown", "--output", str(root / f"{results}.md")]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"compare failed ({proc.returncode}): {stderr[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def measure(root: Path, results: str, repeat: int) -> tuple[float, float]:
    runs = [compare(root, results) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--diff-bytes", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3, help="compare runs per size (best)")
    parser.add_argument("--big-diffs", action="store_true",
                        help="also 1,000 x 20 runs with 64 KiB diffs (peak RSS)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="ci-eval-scale-"))
    try:
        make_repo(base)
        figures = {"load_average_start": [round(x, 2) for x in os.getloadavg()],
                   "diff_bytes": args.diff_bytes}
        for runs in (10, 100):
            size = make_results(base / f"results-{runs}", runs, args.diff_bytes)
            seconds, rss = measure(base, f"results-{runs}", args.repeat)
            figures[f"compare_1000x{runs}_s"] = round(seconds, 3)
            figures[f"peak_rss_mb_1000x{runs}"] = round(rss, 1)
            figures[f"results_mb_1000x{runs}"] = round(size / 1e6, 1)
            shutil.rmtree(base / f"results-{runs}")
        if args.big_diffs:
            size = make_results(base / "results-big", 20, 64 * 1024)
            seconds, rss = measure(base, "results-big", 1)
            figures["compare_1000x20_64k_s"] = round(seconds, 3)
            figures["peak_rss_mb_1000x20_64k"] = round(rss, 1)
            figures["results_mb_1000x20_64k"] = round(size / 1e6, 1)
        figures["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"1,000 tasks x 10 runs: compare --format markdown {figures['compare_1000x10_s']} s "
          f"(target <= 1.0 s), peak RSS {figures['peak_rss_mb_1000x10']} MB")
    print(f"1,000 tasks x 100 runs ({figures['results_mb_1000x100']} MB of results): "
          f"{figures['compare_1000x100_s']} s (target <= 3 s), peak RSS "
          f"{figures['peak_rss_mb_1000x100']} MB (target <= 120 MB)")
    if args.big_diffs:
        print(f"1,000 tasks x 20 runs with 64 KiB diffs ({figures['results_mb_1000x20_64k']} MB):"
              f" {figures['compare_1000x20_64k_s']} s, peak RSS "
              f"{figures['peak_rss_mb_1000x20_64k']} MB")
    print(f"load average: {figures['load_average_start']} -> {figures['load_average_end']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
