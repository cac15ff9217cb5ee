"""How many runs of an invocation may be in each of a run's two phases at once.

`-j N` is the number of agents at once: the agent phase of a run (its workspace, the agent, the
diff) holds one of N agent slots. Once the agent is done, the run gives its agent slot to the
next run and waits for one of the checks slots (the machine's cores by default): a run's checks
go on beside the next runs' agents instead of holding an agent slot, so at -j 1 the checks of
run r and the agent of run r + 1 overlap, and at -j 20 twenty agents keep running while the
finished ones are scored (up to N finished runs may wait for a checks slot). Checks stay bounded
by the cores: twenty test suites at once on two cores would only slow each other past their
timeouts.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from ci_eval.run.sandbox import cancellation

WAIT_SECONDS = 0.1  # how soon a run waiting for a slot notices a cancellation


def default_checks_jobs() -> int:
    """Checks at once by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class Slots:
    """`count` slots handed out first come, first served (a semaphore lets a late comer pass
    those already waiting, and the runs of a task, or the two arms' alternation, would start out
    of their order). A run waiting for one notices a cancellation within WAIT_SECONDS."""

    def __init__(self, count: int):
        self.free = count
        self._waiting: deque[object] = deque()
        self._changed = threading.Condition()

    def take(self) -> None:
        """Wait for a slot; raises cancellation.Cancelled when the invocation is cancelled."""
        ticket = object()
        with self._changed:
            self._waiting.append(ticket)
            try:
                while self._waiting[0] is not ticket or self.free == 0:
                    self._changed.wait(WAIT_SECONDS)
                    cancellation.raise_if_cancelled()
            except BaseException:
                self._waiting.remove(ticket)
                self._changed.notify_all()
                raise
            self._waiting.popleft()
            self.free -= 1
            self._changed.notify_all()  # the next in line may have a slot too

    def give(self) -> None:
        with self._changed:
            self.free += 1
            self._changed.notify_all()


class Turn:
    """One attempt's hold on the slots: an agent slot from the start, given up for a checks
    slot by `checks()`. release() lets go of whatever it holds (idempotent)."""

    def __init__(self, slots: RunSlots | None):
        self._slots = slots
        self._held: Slots | None = None
        if slots is not None:
            slots.agents.take()
            self._held = slots.agents

    @contextmanager
    def checks(self) -> Iterator[None]:
        """The checks phase: the agent slot handed on, a checks slot held while it lasts."""
        self.release()
        if self._slots is not None:
            self._slots.checks.take()
            self._held = self._slots.checks
        try:
            yield
        finally:
            self.release()

    def release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.give()


class RunSlots:
    """The agent slots (`jobs`) and the checks slots of one invocation, shared by its arms."""

    def __init__(self, jobs: int, checks_jobs: int | None = None):
        self.jobs = jobs
        self.checks_jobs = checks_jobs or default_checks_jobs()
        self.agents = Slots(jobs)
        self.checks = Slots(self.checks_jobs)

    @property
    def threads(self) -> int:
        """Worker threads: every slot busy, and up to `jobs` more finished runs waiting for a
        checks slot, so that a burst of agents ending at once (the same sleep, the same API
        hiccup) leaves no agent slot idle while their checks are scored."""
        return 2 * self.jobs + self.checks_jobs

    @contextmanager
    def agent_turn(self) -> Iterator[Turn]:
        """An attempt's turn, from the moment it has an agent slot."""
        turn = Turn(self)
        try:
            yield turn
        finally:
            turn.release()


@contextmanager
def unbounded_turn() -> Iterator[Turn]:
    """A turn that waits for nothing (run_one called outside a run loop)."""
    yield Turn(None)
