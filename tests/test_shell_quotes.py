"""agents/shell.unclosed_quote against the real bash: what it calls unclosed, `bash -n` (parse,
run nothing) refuses too. It never refuses a script bash accepts."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.agents.shell import unclosed_quote

BASH = shutil.which("bash")
PIECES = ["'", '"', "`", "$(", ")", "(", "$'", "\\", "#", " ", ";", "\n", "a", "\\'", "echo "]


def _bash_accepts(script: str) -> bool:
    proc = subprocess.run([BASH, "-n", "-c", script], capture_output=True, timeout=10,
                          env={"PATH": "/usr/bin:/bin"}, check=False)
    return proc.returncode == 0


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_what_is_called_unclosed_bash_refuses_too(script):
    if unclosed_quote(script) is not None:
        assert not _bash_accepts(script), script


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("script", ["claude -p 'hi", 'echo "hi', "echo \"$(echo 'x)\"",
                                    "echo $'abc"])
def test_the_unclosed_examples_are_unclosed_for_bash(script):
    assert unclosed_quote(script) is not None and not _bash_accepts(script)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("script", ["`'`", "`'`'\"'", "echo `echo \"`", "x=\"`'`\""])
def test_quotes_inside_backquotes_are_not_judged(script):
    """bash finds the closing backquote first and parses what is between only when it runs it
    (hypothesis found "`'`" called unclosed, which `bash -n` accepts)."""
    assert _bash_accepts(script) and unclosed_quote(script) is None
