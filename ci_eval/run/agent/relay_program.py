"""The relay of `network: api-only` (api_proxy.py): inside the agent's sandbox, whose network
namespace has nothing but its own loopback, it listens on 127.0.0.1:PORT and passes every
connection to the proxy's unix socket in the run folder, then runs the agent's command.

Started as `python -I -S -c SOURCE RUN_DIR PORT COMMAND...`, SOURCE this file's text
(api_proxy.relay_argv): the package may sit under the repo root the sandbox hides, so the
sandbox's interpreter never reads this file, and the program imports only the standard library.
`pump` is the proxy's too (one copy of the byte pump on both sides)."""

import os
import select
import socket
import subprocess
import sys
import threading
import time

SOCKET_NAME = "api-proxy.sock"
BACKLOG = 64


def pump(src: socket.socket, dst: socket.socket, active: list[float] | None = None, *,
         idle_timeout: float = 0, idle_check: float = 0) -> None:
    """src's bytes to dst until either end closes or, with `active` (when a byte last went
    either way), nothing went either way for idle_timeout (looked at every idle_check seconds);
    then both are shut down."""
    waiting = select.poll()
    waiting.register(src, select.POLLIN)
    try:
        while True:
            if active is not None and not waiting.poll(idle_check * 1000):
                if time.monotonic() - active[0] < idle_timeout:
                    continue
                break
            data = src.recv(65536)
            if not data:
                break
            if active is not None:
                active[0] = time.monotonic()
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for end in (src, dst):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listener: socket.socket, dirfd: int) -> None:
    """Every connection to the listener, passed to the proxy's socket (by the run folder's
    descriptor: its path may be long or hidden)."""
    while True:
        conn, _ = listener.accept()
        up = socket.socket(socket.AF_UNIX)
        try:
            up.connect(f"/proc/self/fd/{dirfd}/{SOCKET_NAME}")
        except OSError:
            conn.close()
            continue
        for a, b in ((conn, up), (up, conn)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main() -> int:
    folder, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    dirfd = os.open(folder, os.O_PATH)
    listener = socket.socket()
    listener.bind(("127.0.0.1", port))
    listener.listen(BACKLOG)
    threading.Thread(target=serve, args=(listener, dirfd), daemon=True).start()
    return subprocess.call(argv)


if __name__ == "__main__":
    sys.exit(main())
