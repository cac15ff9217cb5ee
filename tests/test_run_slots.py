"""Agent slots and checks slots (run/slots.py): `-j N` agents at once, and a run's checks beside
the next runs' agents, at most `--checks-jobs` (default: the cores) at once.

The end-to-end tests run the real CLI without the sandboxes (CI_EVAL_NO_ISOLATION) so that the
agents and the checks can leave marks in one shared folder: the checks of run r wait for the
agent of run r + 1 to start, which happens only when the checks no longer hold its slot."""

from __future__ import annotations

import os
import threading
import time

from harness_helpers import cli, read_lines, write_task

from ci_eval.run.sandbox import cancellation
from ci_eval.run.slots import RunSlots, Slots, Turn, default_checks_jobs, unbounded_turn

# ---- the slots themselves ----------------------------------------------------------------


def _blocked_until(action, release) -> float:
    """Seconds `action` (run on a thread) waited until `release` was called after 0.3 s."""
    done = threading.Event()
    started = time.monotonic()

    def worker():
        action()
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    assert not done.wait(0.3), "did not wait for the slot"
    release()
    assert done.wait(5)
    thread.join()
    return time.monotonic() - started


def test_an_agent_slot_is_handed_on_when_the_checks_start():
    slots = RunSlots(jobs=1, checks_jobs=1)
    first = Turn(slots)
    second: list[Turn] = []
    checks = first.checks()
    waited = _blocked_until(lambda: second.append(Turn(slots)), checks.__enter__)
    assert waited >= 0.3 and second  # the next agent started once the first run's checks did
    assert slots.checks.free == 0  # the checks slot is held meanwhile
    checks.__exit__(None, None, None)
    assert slots.checks.free == 1  # and given back
    second[0].release()
    second[0].release()  # idempotent
    assert slots.agents.free == 1


def test_checks_wait_for_a_checks_slot():
    slots = RunSlots(jobs=2, checks_jobs=1)
    first, second = Turn(slots), Turn(slots)
    first_checks = first.checks()
    first_checks.__enter__()
    waited = _blocked_until(lambda: second.checks().__enter__(),
                            lambda: first_checks.__exit__(None, None, None))
    assert waited >= 0.3
    assert slots.agents.free == 2


def test_a_run_waiting_for_a_slot_ends_when_the_invocation_is_cancelled():
    slots = RunSlots(jobs=1, checks_jobs=1)
    holder = Turn(slots)
    raised: list[BaseException] = []

    def wait_for_slot():
        try:
            Turn(slots)
        except cancellation.Cancelled as exc:
            raised.append(exc)

    try:
        waited = _blocked_until(wait_for_slot, cancellation.request)
    finally:
        cancellation.reset()
        holder.release()
    assert raised and waited < 2


def test_slots_go_to_those_waiting_in_the_order_they_came():
    slots = Slots(1)
    slots.take()
    order: list[int] = []

    def wait(number):
        slots.take()
        order.append(number)
        slots.give()

    threads = []
    for number in range(6):
        threads.append(threading.Thread(target=wait, args=(number,)))
        threads[-1].start()
        time.sleep(0.25)  # each one waiting (and polling for a cancellation) before the next
    slots.give()
    for thread in threads:
        thread.join(10)
    assert order == list(range(6))


def test_defaults():
    slots = RunSlots(jobs=3)
    assert slots.checks_jobs == default_checks_jobs() >= 1
    assert slots.threads == 2 * 3 + slots.checks_jobs
    with unbounded_turn() as turn, turn.checks():
        pass  # outside a run loop nothing is waited for


# ---- through the CLI ---------------------------------------------------------------------

AGENT = """set -e
mark={mark}
touch "$mark/agent-start-$CI_EVAL_RUN"
for other in "$mark"/agent-active-*; do [ -e "$other" ] && touch "$mark/agents-overlapped"; done
touch "$mark/agent-active-$CI_EVAL_RUN"
sleep 0.3
rm "$mark/agent-active-$CI_EVAL_RUN"
echo "$CI_EVAL_RUN" > run.txt
echo hello > greet.txt
"""

CHECKS = """import os, sys, time
mark, last = {mark!r}, {last}
run = int(open('run.txt').read())
mine = os.path.join(mark, f'checks-active-{{run}}')
open(mine, 'w').close()
if any(name.startswith('checks-active-') and name != f'checks-active-{{run}}'
       for name in os.listdir(mark)):
    open(os.path.join(mark, 'checks-overlapped'), 'w').close()
next_agent = os.path.join(mark, f'agent-start-{{run + 1}}')
deadline = time.monotonic() + 60
while run < last and not os.path.exists(next_agent) and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(0.3)
os.remove(mine)
sys.exit(0 if (run == last or os.path.exists(next_agent))
         and open('greet.txt').read() == 'hello\\n' else 1)
"""


def _pipelined_task(tmp_path, k):
    mark = tmp_path / "marks"
    mark.mkdir()
    write_task(tmp_path, checks=CHECKS.format(mark=str(mark), last=k))
    return mark, AGENT.format(mark=mark)


def test_at_j1_the_next_agent_runs_while_the_checks_score_the_last_one(tmp_path):
    k = 3
    mark, agent = _pipelined_task(tmp_path, k)
    done = cli("run", "-k", str(k), "-j", "1", "--checks-jobs", "1", "--agent-cmd", agent,
               cwd=tmp_path, env={**os.environ, "CI_EVAL_NO_ISOLATION": "1"}, timeout=240)
    assert done.returncode == 0, done.stderr
    records = read_lines(tmp_path / "results" / "task-001-greet.jsonl")
    assert [r["status"] for r in sorted(records, key=lambda r: r["run"])] == ["pass"] * k, records
    assert not (mark / "agents-overlapped").exists()  # -j 1: one agent at a time still
    assert not (mark / "checks-overlapped").exists()  # --checks-jobs 1: one checks at a time


def test_checks_jobs_is_validated(tmp_path):
    write_task(tmp_path)
    done = cli("run", "--checks-jobs", "0", "--agent-cmd", "true", cwd=tmp_path)
    assert done.returncode == 2
    assert "--checks-jobs" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "results").exists()


def test_help_says_what_j_counts(tmp_path):
    done = cli("run", "--help", cwd=tmp_path)
    assert "agents at once" in done.stdout and "--checks-jobs" in done.stdout
