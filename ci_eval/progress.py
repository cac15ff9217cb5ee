"""Progress on long work: a live line on a TTY, ::group:: per task in GitHub Actions, else a line
per run. Always on stderr, so stdout stays for reports and --json."""

from __future__ import annotations

import os
import sys


class Progress:
    def __init__(self, stream=None, *, github: bool | None = None, tty: bool | None = None):
        self.stream = stream or sys.stderr
        self.github = os.environ.get("GITHUB_ACTIONS") == "true" if github is None else github
        self.tty = (hasattr(self.stream, "isatty") and self.stream.isatty()) if tty is None else tty
        self.total = 0
        self.done = 0
        self.pending_lines: dict[str, list[str]] = {}

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def start(self, tasks, total_runs: int) -> None:
        self.total = total_runs
        if not self.tty and not self.github:
            self._write(f"ci-eval: {total_runs} runs over {len(tasks)} tasks\n")

    def run_done(self, record: dict) -> None:
        self.done += 1
        line = f"{record['task']} run {record['run']}: {record['status']}"
        if record["status"] != "pass" and record.get("reason"):
            line += f" ({record['reason'][:160]})"
        if self.github:
            self.pending_lines.setdefault(record["task"], []).append(line)
        elif self.tty:
            self._write(f"\r\033[K[{self.done}/{self.total}] {line[:100]}")
        else:
            self._write(f"[{self.done}/{self.total}] {line}\n")

    def confirming(self, task_id: str, target: int) -> None:
        self.total += target
        message = f"{task_id}: breached the gate, confirming with {target} runs in all"
        if self.github:
            self.pending_lines.setdefault(task_id, []).append(message)
        else:
            self._write(("\r\033[K" if self.tty else "") + message + "\n")

    def task_done(self, task_id: str, records: list[dict]) -> None:
        if not self.github:
            return
        passes = sum(1 for r in records if r["status"] == "pass")
        self._write(f"::group::{task_id} ({passes}/{len(records)} pass)\n")
        for line in self.pending_lines.pop(task_id, []):
            self._write(line + "\n")
        self._write("::endgroup::\n")

    def close(self) -> None:
        if self.tty:
            self._write("\r\033[K")
