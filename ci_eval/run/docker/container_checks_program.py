"""Runs inside a checks container as `python3 -I THIS CHECKS_PY`: the container's stdout becomes
the verdict channel, as the verdict pipe is in the local sandbox (ci_eval/run/checks/checks_program.py).

The process keeps the container's stdout on a descriptor of its own (not inherited) and points
fd 1 at stderr, so nothing checks.py or the code under test prints reaches stdout; it is
non-dumpable (checks_program.judge), so its children cannot open /proc/<pid>/fd of it. The harness
reads the one word it writes there (pass, fail, crash) as the verdict."""

import importlib.util
import os
import sys


def main() -> int:
    verdict = os.dup(1)
    os.set_inheritable(verdict, False)
    os.dup2(2, 1)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
    spec = importlib.util.spec_from_file_location(
        "ci_eval_run_checks", os.path.join(os.path.dirname(here), "checks", "checks_program.py"))
    if spec is None or spec.loader is None:
        raise SystemExit("ci-eval: the checks program is missing beside this one")
    wrapper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wrapper)
    return wrapper.judge(verdict, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
