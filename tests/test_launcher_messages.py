"""The launcher's result pipe and the sandbox's status pipe carry framed messages (one JSON
object per line with a `kind`), each parsed in one place: nothing is decided on a message's
text, and a line of the old text protocol, or anything else, is never taken for a message."""

from __future__ import annotations

import os

import pytest

from ci_eval.run.sandbox.launcher_program import ResultKind, read_result, tell
from ci_eval.run.sandbox.sandbox_program import Failure, FailureKind, read_failure, report


def _said(write) -> str:
    read_fd, write_fd = os.pipe()
    try:
        write(write_fd)
        os.close(write_fd)
        return os.read(read_fd, 65536).decode()
    finally:
        os.close(read_fd)


@pytest.mark.parametrize("kind, value", [(ResultKind.PID, 4242), (ResultKind.EXIT, -9),
                                         (ResultKind.EXIT, 0),
                                         (ResultKind.ERROR, "OSError: no fork\nsecond line")])
def test_a_result_message_reads_back_as_it_was_told(kind, value):
    text = _said(lambda fd: tell(fd, kind, value))
    assert text.count("\n") == 1  # one frame, one line, whatever the message holds
    assert read_result(text.rstrip("\n")) == (kind, value)


@pytest.mark.parametrize("line", ["pid 4242", "exit 0", "error boom", "", "{}", "[1, 2]",
                                  '{"kind": "exit", "value": "0"}',  # an exit code as text
                                  '{"kind": "pid", "value": true}',
                                  '{"kind": "error", "value": 3}',
                                  '{"kind": "quit", "value": 0}'])
def test_what_is_not_a_result_message_is_none(line):
    assert read_result(line) is None


def test_a_sandbox_failure_keeps_its_kind_whatever_its_text(capsys):
    """Retrying depends on the kind: a sandbox failure whose text starts with "command not
    found" is still retried, a missing command whatever it is called is not."""
    said = _said(lambda fd: report(fd, "command not found: (a mount failed)"))
    assert read_failure(said) == Failure(FailureKind.SANDBOX, "command not found: (a mount failed)")
    said = _said(lambda fd: report(fd, "no-such-tool", FailureKind.COMMAND_NOT_FOUND))
    assert read_failure(said).kind is FailureKind.COMMAND_NOT_FOUND
    assert "ci-eval sandbox: no-such-tool" in capsys.readouterr().err  # for people


def test_no_status_is_no_failure_and_the_launchers_error_is_one():
    assert read_failure("") is None
    assert read_failure("", "sandbox launcher: it ended") == Failure(
        FailureKind.SANDBOX, "sandbox launcher: it ended")
    # text that is not a frame on the status pipe is still a failure of the sandbox
    assert read_failure("garbage\n") == Failure(FailureKind.SANDBOX, "garbage")
