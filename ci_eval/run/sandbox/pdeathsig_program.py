"""Where setpriv (util-linux >= 2.33) is missing: a command that dies with the harness
(process.death_signal_prefix). Started as `python -I -S -c TEXT PARENT_PID COMMAND...`, TEXT this
file's: it arms PR_SET_PDEATHSIG (SIGKILL), checks that the parent did not die before that
(exit 137 then), and execs COMMAND. Slower to start than setpriv (a Python), so only a fallback."""

import ctypes
import os
import sys

PR_SET_PDEATHSIG = 1
SIGKILL = 9


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if os.getppid() != int(sys.argv[1]):
        os._exit(137)
    os.execvp(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
