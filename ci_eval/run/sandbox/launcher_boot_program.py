"""The sandbox launcher's start (launcher.py): `python -I -S -c TEXT SOCKET_FD CONFIG TITLE`,
TEXT this file's. CONFIG's `path` (the folder ci_eval is imported from: `-I -S` leaves only the
standard library on sys.path) goes first on sys.path, then launcher_program serves SOCKET_FD
(TITLE is only what ps shows)."""

import json
import sys

if __name__ == "__main__":
    sys.path[:0] = json.loads(sys.argv[2])["path"]
    from ci_eval.run.sandbox import launcher_program  # noqa: E402 - importable only now

    launcher_program.serve(int(sys.argv[1]))
