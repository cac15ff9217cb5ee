"""Progress on long work, always on stderr (stdout stays for reports and --json):

- a terminal: one live line fitted to its width, `[done/total] N running, elapsed, ETA` and the
  last finished run, redrawn every second from the start; a run that did not pass is printed as a
  line of its own above it (with its reason), so reasons are never erased;
- a run that did not pass is one line of at most 100 columns (the terminal's width when less):
  a long reason is cut, with `(ci-eval show TASK RUN)` pointing at the whole of it;
- GitHub Actions: each finished run at once as a collapsed `::group::` (its reason inside), and
  a line per task when its runs are in;
- anything else (a log file, a pipe): a line per finished run.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time

from ci_eval.output import mask

REFRESH_SECONDS = 1.0


def format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def eta(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the pace so far; None before the first run finished."""
    if done <= 0 or total <= done:
        return None if done <= 0 else 0.0
    return elapsed / done * (total - done)


def fit(text: str, width: int) -> str:
    """One terminal line: never wraps (a wrapped live line leaves fragments behind)."""
    width = max(10, width - 1)
    return text if len(text) <= width else text[: width - 1] + "…"


MAX_LINE = 100  # a finished run's line fits a 100-column terminal, its reason cut to fit


def failed_line(line: str, reason: str, record: dict, width: int = MAX_LINE) -> str:
    """A run that did not pass, on one line of at most `width` columns: its reason, cut to fit,
    and where the whole of it is (`ci-eval show TASK RUN`)."""
    if not reason:
        return fit(line, width + 1)
    text = f"{line}: {reason}"
    if len(text) <= width:
        return text
    where = f" (ci-eval show {record['task']} {record['run']})"
    room = width - len(line) - len(": ") - len(where) - 1
    if room < 10:  # a task name that long: the pointer alone
        return fit(f"{line}:{where}", width + 1)
    return f"{line}: {reason[:room]}…{where}"


def run_line(record: dict) -> str:
    line = f"{record['task']} run {record['run']}: {record['status']}"
    if record.get("wall_seconds") is not None:
        line += f" ({record['wall_seconds']:.1f}s)"
    return line


class Progress:
    def __init__(self, stream=None, *, github: bool | None = None, tty: bool | None = None,
                 clock=time.monotonic, width: int | None = None):
        self.stream = stream or sys.stderr
        self.github = os.environ.get("GITHUB_ACTIONS") == "true" if github is None else github
        self.tty = (hasattr(self.stream, "isatty") and self.stream.isatty()) if tty is None else tty
        self.clock = clock
        self._width = width
        self.total = 0
        self.done = 0
        self.running = 0
        self.started_at = clock()
        self.last = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # --- what the runner calls --------------------------------------------------------------

    def start(self, tasks, total_runs: int) -> None:
        with self._lock:
            self.total = total_runs
            self.started_at = self.clock()
            if self.tty:
                self._draw()
            else:
                self._write(f"ci-eval: {total_runs} runs over {len(tasks)} tasks\n")
        if self.tty and self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True, name="progress")
            self._ticker.start()

    def run_started(self) -> None:
        with self._lock:
            self.running += 1
            if self.tty:
                self._draw()

    def run_done(self, record: dict) -> None:
        with self._lock:
            self.done += 1
            self.running = max(0, self.running - 1)
            line = run_line(record)
            reason = record.get("reason") if record["status"] != "pass" else ""
            # one line: agent text starts no line; masked before it is cut (a cut secret is
            # no longer its value)
            reason = mask(" ".join((reason or "").split()))
            if self.github:  # indented: a reason never reads as a workflow command (::error::)
                self._write(f"::group::[{self.done}/{self.total}] {line}\n"
                            + (f"  {reason}\n" if reason else "") + "::endgroup::\n")
            elif self.tty:
                self.last = line
                if record["status"] != "pass":
                    self._write("\r\033[K" + failed_line(line, reason, record,
                                                          min(MAX_LINE, self._columns())) + "\n")
                self._draw()
            else:
                self._write(failed_line(f"[{self.done}/{self.total}] {line}", reason, record)
                            + "\n")

    def confirming(self, task_id: str, target: int, extra: int) -> None:
        with self._lock:
            self.total += extra
            message = (f"{task_id}: breached the gate or came close, confirming with {target} "
                       "runs in all")
            self._write(("\r\033[K" if self.tty else "") + message + "\n")
            if self.tty:
                self._draw()

    def task_done(self, task_id: str, records: list[dict]) -> None:
        if not self.github:
            return
        passes = sum(1 for r in records if r["status"] == "pass")
        with self._lock:
            self._write(f"{task_id}: {passes}/{len(records)} runs passed\n")

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        if self.tty:
            with self._lock:
                self._write("\r\033[K")

    # --- drawing ------------------------------------------------------------------------------

    def status_line(self) -> str:
        elapsed = self.clock() - self.started_at
        left = eta(self.done, self.total, elapsed)
        text = (f"[{self.done}/{self.total}] {self.running} running, "
                f"{format_seconds(elapsed)} elapsed, ETA "
                f"{'?' if left is None else format_seconds(left)}")
        return f"{text} | {self.last}" if self.last else text

    def _columns(self) -> int:
        return self._width or shutil.get_terminal_size((100, 24)).columns

    def _draw(self) -> None:
        self._write("\r\033[K" + fit(self.status_line(), self._columns()))

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            with self._lock:
                self._draw()

    def _write(self, text: str) -> None:
        try:
            self.stream.write(mask(text))
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not stop the runs
