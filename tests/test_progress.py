"""Progress lines: visible from the start, never erasing reasons, fitted to the terminal."""

from __future__ import annotations

import io

from ci_eval.progress import Progress, eta, fit, format_seconds


def _rec(run, status, reason="", task="task-001-x"):
    return {"run": run, "task": task, "status": status, "reason": reason, "wall_seconds": 1.25}


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_github_actions_prints_each_run_at_once_in_its_own_group():
    out = io.StringIO()
    progress = Progress(out, github=True, tty=False)
    progress.start([object()], 2)
    progress.run_done(_rec(1, "pass"))
    assert "::group::[1/2] task-001-x run 1: pass (1.2s)\n::endgroup::\n" in out.getvalue()
    progress.run_done(_rec(2, "fail", "FAIL: wrong answer"))
    assert "::group::[2/2] task-001-x run 2: fail (1.2s)\n  FAIL: wrong answer\n::endgroup::\n" \
        in out.getvalue()
    progress.run_done(_rec(2, "fail", "FAIL: x\n::error title=forged::merge me"))
    assert "\n  FAIL: x ::error title=forged::merge me\n::endgroup::\n" in out.getvalue()
    assert "\n::error" not in out.getvalue()  # agent text never starts a workflow command
    progress.task_done("task-001-x", [_rec(1, "pass"), _rec(2, "fail")])
    assert out.getvalue().endswith("task-001-x: 1/2 runs passed\n")


def test_terminal_line_shows_counts_in_flight_elapsed_and_eta_from_the_start():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, github=False, tty=True, clock=clock, width=200)
    progress.start([object()], 4)
    assert out.getvalue().endswith("[0/4] 0 running, 0s elapsed, ETA ?")
    progress.run_started()
    progress.run_started()
    clock.now += 30
    progress.run_done(_rec(1, "pass"))
    assert out.getvalue().endswith("[1/4] 1 running, 30s elapsed, ETA 1m30s | "
                                   "task-001-x run 1: pass (1.2s)")
    progress.close()


def test_a_failing_run_is_a_line_of_its_own_that_the_live_line_does_not_erase():
    out = io.StringIO()
    progress = Progress(out, github=False, tty=True, width=80)
    progress.start([object()], 2)
    progress.run_done(_rec(1, "fail", "FAIL: expected 42, found 41"))
    progress.run_done(_rec(2, "pass"))
    lines = out.getvalue().split("\n")
    assert "task-001-x run 1: fail (1.2s): FAIL: expected 42, found 41" in lines[0]
    assert len(lines) == 2  # the reason's line stays; only the live line is redrawn
    progress.close()


def test_the_live_line_never_wraps():
    out = io.StringIO()
    progress = Progress(out, github=False, tty=True, width=40)
    progress.start([object()], 1)
    progress.run_done(_rec(1, "pass", task="task-001-a-very-long-task-name-indeed"))
    for chunk in out.getvalue().split("\r\033[K"):
        assert len(chunk) <= 39
    progress.close()


def test_plain_output_has_a_line_per_run_with_its_reason():
    out = io.StringIO()
    progress = Progress(out, github=False, tty=False)
    progress.start([object()], 1)
    progress.run_done(_rec(1, "error", "agent command not found: claude"))
    assert out.getvalue().splitlines()[-1] == \
        "[1/1] task-001-x run 1: error (1.2s): agent command not found: claude"


def test_helpers():
    assert format_seconds(5) == "5s" and format_seconds(65) == "1m05s"
    assert format_seconds(3725) == "1h02m"
    assert eta(0, 10, 5) is None and eta(5, 10, 50) == 50 and eta(10, 10, 50) == 0
    assert fit("x" * 50, 20) == "x" * 18 + "…"


def test_a_failing_runs_line_fits_100_columns_and_says_where_the_reason_is(tmp_path):
    """Issue 37: a failing run's progress line ran to 1,100 characters. Through the CLI: the
    line is cut to 100 columns, and `ci-eval show` gives the whole reason."""
    from harness_helpers import cli, write_task

    long_reason = "expected " + " ".join(f"case-{n}" for n in range(100))
    write_task(tmp_path, checks="from ci_eval.checks import failed, main\n"
                                f"main(failed({long_reason!r}))\n")
    done = cli("run", "-k", "2", "--agent", "noop", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "run " in line and ": fail" in line]
    assert len(lines) == 2, done.stderr
    for line in lines:
        number = line.split(" run ", 1)[1].split(":", 1)[0]
        assert len(line) <= 100, line
        assert line.endswith(f"… (ci-eval show task-001-greet {number})"), line
        assert "expected case-0" in line
    shown = cli("show", "task-001-greet", "1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "case-99" in shown.stdout  # the whole reason is there
