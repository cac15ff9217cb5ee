"""Issue #31, item 11: agent text in output formats. Code under test prints control characters
and workflow commands; they reach the run's reason (the tail of what the tests printed) and the
agent's log. `report --format junit` once wrote XML that did not parse, and `ci-eval show`
printed `::error` / `::stop-commands` at line starts (also after \\r, NEL, U+2028, U+2029),
which a GitHub Actions step obeys. Now the XML parses, holding the text with each character XML
cannot hold shown as an escape, and no line `show` prints starts with a workflow command."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET

import pytest
from conftest import copy_of

from ci_eval.render.inert import terminal_text
from ci_eval.render.junit import Case, render_cases

PAYLOAD = ("start\r::error file=a.py::forged\n  ::stop-commands::tok3n"
           "\x85::warning::after-nel\u2028::notice::after-ls\u2029##[error]old-style"
           "\r\n::add-mask::x\udcff \x01\x1b[31mred\x0b\x0c\x7f\ufffe end")
PRINTER = ("import sys\n"
           f"TEXT = {PAYLOAD!r}\n"
           "sys.stdout.buffer.write(TEXT.encode('utf-8', 'surrogateescape'))\n"
           "sys.stdout.flush()\n")
CODE = "def add(a, b):\n    import evil\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
CHECKS = ("from ci_eval.checks import main, run_tests\n"
          "main(lambda: run_tests(fail_to_pass=['tests/test_calc.py::test_add'], "
          "restore=['tests/']))\n")
# the agent prints the payload to its log, and leaves code under test that prints it in checks
AGENT = ("import shutil, sys\n"
         f"sys.stdout.buffer.write({PAYLOAD!r}.encode('utf-8', 'surrogateescape'))\n"
         "open('evil.py', 'w').write(open(sys.argv[1]).read())\n")
WORKFLOW_COMMAND = re.compile(r"^\s*(::|##\[)", re.MULTILINE)


@pytest.fixture(scope="module")
def recorded_once(cli, make_task, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("recorded")
    repo_root = tmp_path / "repo"
    (repo_root / "tasks").mkdir(parents=True)
    make_task(repo_root, "task-001-calc", checks=CHECKS, metadata={"requires": ["pytest"]},
              repo_state={"calc.py": CODE, "tests/test_calc.py": TESTS},
              solution="sed -i 's/a - b/a + b/' calc.py\n")
    (tmp_path / "printer.py").write_text(PRINTER)
    (tmp_path / "agent.py").write_text(AGENT)
    agent = f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'printer.py'}"
    ran = cli("run", "-k", "1", "--agent-cmd", agent, cwd=repo_root, timeout=180)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    record = json.loads((repo_root / "results" / "task-001-calc.jsonl").read_text())
    assert record["status"] == "fail" and "\x1b[31mred" in record["reason"], record
    return repo_root


@pytest.fixture
def recorded(recorded_once, tmp_path):
    return copy_of(recorded_once, tmp_path / "repo")


def test_report_junit_parses_and_keeps_the_text_escaped(cli, recorded):
    proc = cli("report", "--format", "junit", cwd=recorded)
    assert proc.returncode in (0, 1), proc.stderr
    root = ET.fromstring(proc.stdout.encode())
    text = "".join(root.itertext())
    assert "\\x1b[31mred" in text and "\\ufffe end" in text
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", text)


def test_show_prints_no_workflow_command_and_no_control_character(cli, recorded):
    proc = cli("show", "task-001-calc", cwd=recorded)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "::error file=a.py::forged" in out and "after-nel" in out  # shown, not obeyed
    assert not WORKFLOW_COMMAND.search(out), [line for line in out.split("\n")
                                              if WORKFLOW_COMMAND.match(line)]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", out)
    assert "\\x1b[31mred" in out and "\\x85" in out and "\\u2028" in out


def test_show_json_is_one_physical_line_per_json_line(cli, recorded):
    proc = cli("show", "task-001-calc", "--json", cwd=recorded)
    assert proc.returncode == 0, proc.stderr
    assert not re.search("[\x85\u2028\u2029\r]", proc.stdout)
    assert not WORKFLOW_COMMAND.search(proc.stdout)
    assert "\x1b[31mred" in json.loads(proc.stdout)["record"]["reason"]


@pytest.mark.parametrize("separator", ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029",
                                       "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
@pytest.mark.parametrize("command", ["::error::x", "::stop-commands::t", "##[error]x",
                                     " \t::warning::x", "\u3000::notice::x"])
def test_no_separator_puts_a_command_at_a_line_start(separator, command):
    shown = terminal_text(f"before{separator}{command}")
    assert not WORKFLOW_COMMAND.search(shown)
    assert all(not line.strip().startswith(("::", "##[")) for line in shown.splitlines())


def test_every_character_xml_cannot_hold_is_escaped_in_junit():
    text = "".join(chr(c) for c in range(0x20)) + "\ud800\udfff\ufffe\uffff é ok"
    xml = render_cases("report", [Case(text, text, failure=(text, text), seconds=1.0)],
                       notices=(text,))
    root = ET.fromstring(xml.encode())
    case = root.find(".//testcase")
    assert case.get("name").startswith("\\x00\\x01") and case.get("name").endswith("é ok")
    assert "\\ud800" in case.find("system-out").text and "\t" in case.find("system-out").text
