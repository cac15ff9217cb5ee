"""A run's workspace, laid from its task's template against copied with shutil.copytree (what
every run did before run/workspace/template.py): CPU of this thread per workspace (the kernel's
part included), both ways interleaved in one process, `.git` written both times.

Builds overhead.py's trivial task (10 files of 300 bytes and greet.txt) and creates --repeat
workspaces each way per round through WorkspaceFactory.create; medians over the rounds.

Run: python bench/workspace_copy.py [--json] [--rounds 9] [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from overhead import make_task  # noqa: E402  (this folder's script)

from ci_eval.run.workspace.build import WorkspaceFactory, remove_tree  # noqa: E402


def measure(rounds: int, repeat: int) -> dict:
    base = Path(tempfile.mkdtemp(prefix="ci-eval-bench-copy-"))
    try:
        repo_state = (make_task(base / "tasks", 1) / "repo-state").resolve()
        laid, copied = WorkspaceFactory(base / "laid"), WorkspaceFactory(base / "copied")
        copied._prepare(repo_state).template = None  # the factory's copytree path
        times: dict[str, list[float]] = {"template": [], "copytree": []}
        for round_no in range(rounds):
            for name, factory in (("template", laid), ("copytree", copied)):
                folder = base / f"{name}-{round_no}"
                folder.mkdir()
                started = time.thread_time()
                for number in range(repeat):
                    factory.create(repo_state, folder / str(number))
                times[name].append((time.thread_time() - started) / repeat * 1000)
                remove_tree(folder)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    template, copytree = (statistics.median(times[n]) for n in ("template", "copytree"))
    return {"template_cpu_ms": round(template, 2), "copytree_cpu_ms": round(copytree, 2),
            "ratio": round(template / copytree, 3), "rounds": rounds, "repeat": repeat}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (median)")
    parser.add_argument("--repeat", type=int, default=20, help="workspaces per round and way")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1:
        parser.error("--rounds and --repeat: expected a whole number >= 1")
    figures = measure(args.rounds, args.repeat)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"CPU per workspace (median of {args.rounds} rounds of {args.repeat}): template "
              f"{figures['template_cpu_ms']} ms, copytree {figures['copytree_cpu_ms']} ms, "
              f"ratio {figures['ratio']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
