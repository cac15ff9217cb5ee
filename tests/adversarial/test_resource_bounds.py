"""Class 7: every step after the agent is bounded in time and memory, whatever it left behind.

Measured for real: the wall time of `ci-eval run` and its peak RSS (wait4 of the CLI process:
its own peak or that of any process it waited for, the sandboxed agent and checks included).
Defences: ci_eval/run/workspace/diff.py (entry, byte and time budgets; big files compared, not diffed;
a line diff bounded whatever the change), process.py (the agent's output capped), and the
checks helpers (the output of code under test kept as a capped tail).
"""

from __future__ import annotations

from .conftest import needs_sandbox

MIB = 1024


def _assert_bounded(result, seconds: float, rss_mib: int) -> None:
    assert result.returncode == 0, result.detail()
    assert result.seconds < seconds, f"{result.seconds:.1f}s of harness time"
    assert result.max_rss_kib < rss_mib * MIB, f"peak RSS {result.max_rss_kib // MIB} MiB"


@needs_sandbox
def test_an_8_gib_sparse_file_costs_no_harness_time(arena):
    """The issue: 273 s of harness time under --timeout 30. New and replacing a tracked file,
    and one of the same size as its pristine (compared within the read budget)."""
    arena.task(files={"greet.txt": "bye\n", "data.bin": "x" * 4096})
    agent = arena.agent("truncate -s 8G huge.bin && truncate -s 8G data.bin\n")
    result = arena.run("run", "-k", "1", "--timeout", "30", "--agent-cmd", agent)
    _assert_bounded(result, 60, 300)
    record = result.record()
    assert record["status"] == "fail"
    assert "Binary files /dev/null and b/huge.bin differ" in record["diff"]
    assert "b/data.bin differ" in record["diff"]


@needs_sandbox
def test_a_300_mib_file_keeps_the_harness_small(arena):
    """The issue: 823 MB of harness memory."""
    arena.task()
    agent = arena.agent("head -c 314572800 /dev/zero > big.bin && echo hello > greet.txt\n")
    result = arena.run("run", "-k", "1", "--timeout", "30", "--agent-cmd", agent)
    _assert_bounded(result, 60, 250)
    assert result.record()["status"] == "pass"


@needs_sandbox
def test_an_agent_flooding_its_output_gets_a_capped_log(arena):
    arena.task()
    agent = arena.agent("head -c 209715200 /dev/zero | tr '\\0' 'x'; echo; echo done\n")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    _assert_bounded(result, 60, 250)
    logs = list(result.out.glob("logs/*/1.log"))
    assert len(logs) == 1 and logs[0].stat().st_size < 300 * 1024, logs
    text = logs[0].read_text()
    assert text.startswith("[ci-eval: log cut to its last 256 KiB]") and text.endswith("done\n")


@needs_sandbox
def test_a_change_to_every_other_line_of_a_big_file_is_diffed_in_bounded_time(arena):
    """difflib is quadratic on interleaved changes: every other line of a 16000-line (100 KB)
    file took minutes (8000 lines: 29 s), unbounded by the diff's time budget, which is
    checked between files only."""
    lines = [f"value_{i} = {i}\n" for i in range(16000)]
    arena.task(files={"greet.txt": "bye\n", "settings.py": "".join(lines)})
    changed = arena.file("settings.py", "".join(
        line if i % 2 else line.replace(" = ", " = 1 + ") for i, line in enumerate(lines)))
    agent = arena.agent(f"cp {changed} settings.py && echo hello > greet.txt\n")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent, timeout=150)
    _assert_bounded(result, 40, 250)
    record = result.record()
    assert record["status"] == "pass"
    assert "-value_0 = 0\n+value_0 = 1 + 0\n value_1 = 1\n" in record["diff"], record["diff"][:500]
    assert record["diff_truncated"] is True  # 64 KiB of it is kept


@needs_sandbox
def test_many_files_stop_the_diff_at_its_entry_budget(arena):
    arena.task()
    agent = arena.agent("mkdir many && cd many && seq 1 50500 | xargs touch && cd .. && "
                        "echo hello > greet.txt\n")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent, timeout=150)
    _assert_bounded(result, 90, 250)
    record = result.record()
    assert record["status"] == "pass"
    assert "more than 50000 paths" in record["reason"] and record["diff_truncated"] is True


@needs_sandbox
def test_code_under_test_flooding_pytest_output_keeps_the_checks_small(arena):
    """The checks process reads pytest's output: 300 MiB of it (written to the inherited pipe,
    past pytest's capture) must not sit in its memory."""
    arena.calc_task()
    flood = arena.file("flood.py", """import os
chunk = b"x" * (1 << 20)
for fd in range(3, 20):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
            for _ in range(300):
                os.write(fd, chunk)
    except OSError:
        pass
def add(a, b):
    return a - b
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", arena.agent(f"cp {flood} calc.py\n"),
                       timeout=150)
    _assert_bounded(result, 90, 250)
    record = result.record()
    assert record["status"] == "fail", record
    assert len(record["reason"]) < 2000


def _apply(old: list[str], diff: list[str]) -> list[str]:
    """Apply a unified diff (as linediff writes it) to old."""
    out, i, k = [], 0, 2
    while k < len(diff):
        start, _, length = diff[k].split()[1][1:].partition(",")
        first = int(start) - (1 if length != "0" else 0)
        out += old[i:first]
        i, k = first, k + 1
        while k < len(diff) and not diff[k].startswith("@@"):
            kind, line = diff[k][0], diff[k][1:]
            if kind in " -":
                assert old[i] == line, (old[i], line)
                i += 1
            if kind in " +":
                out.append(line)
            k += 1
    return out + old[i:]


def test_the_bounded_line_diff_is_a_correct_diff(monkeypatch):
    """Random edits, with the difflib budget as shipped, spent, and nearly spent: applying the
    diff to the old lines gives the new ones; and interleaved changes of 50000 lines stay fast."""
    import difflib
    import random
    import time

    from ci_eval.run.workspace import linediff

    rng = random.Random(7)
    for budget in (linediff.CELL_BUDGET, 0, 5):
        monkeypatch.setattr(linediff, "CELL_BUDGET", budget)
        for _ in range(400):
            alphabet = [f"l{x}\n" for x in range(rng.randint(1, 10))] + ["last"]
            old = [rng.choice(alphabet) for _ in range(rng.randint(0, 25))]
            new = list(old)
            for _ in range(rng.randint(0, 5)):
                at = rng.randint(0, len(new))
                new[at:at + rng.randint(0, 2)] = rng.sample(alphabet, rng.randint(0, 2))
            diff = linediff.unified_diff(old, new, "a/x", "b/x")
            assert (diff == []) == (old == new)
            if diff:
                assert _apply(old, diff) == new, (old, new, diff)
    monkeypatch.undo()
    ten = [f"{i}\n" for i in range(10)]
    for old, new in (([], ["x\n"]), (["x\n"], []), (ten, ["new\n"] + ten), (ten, ten[:-1]),
                     (ten, ten[:4] + ["changed\n"] + ten[5:]), (ten, ten[:3] + ten[4:] + ["x"])):
        assert linediff.unified_diff(old, new, "a/x", "b/x") == list(
            difflib.unified_diff(old, new, "a/x", "b/x"))
    lines = [f"line {i}\n" for i in range(50000)]
    for new in ([line if i % 2 else f"other {i}\n" for i, line in enumerate(lines)],
                lines[::-1], ["a\n", "b\n"] * 25000):
        started = time.monotonic()
        diff = linediff.unified_diff(lines, new, "a/x", "b/x")
        assert time.monotonic() - started < 15
        assert _apply(lines, diff) == new
