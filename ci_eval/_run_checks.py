"""Runs a task's checks.py so that a crash is told apart from a fail.

Started as `python -I -m ci_eval._run_checks CHECKS_PY` with cwd = workspace. -I keeps the
workspace off sys.path, so files the agent wrote cannot shadow ci_eval or the checks' imports.
Exit 0/1 come from checks.py; an uncaught exception exits CRASH_EXIT with the traceback on stderr.
"""

import runpy
import sys
import traceback
from pathlib import Path

CRASH_EXIT = 3


def main() -> int:
    checks = Path(sys.argv[1])
    sys.argv = [str(checks)]
    sys.path.insert(0, str(checks.parent))
    try:
        runpy.run_path(str(checks), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - any crash of checks.py is an infrastructure error
        traceback.print_exc()
        return CRASH_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
