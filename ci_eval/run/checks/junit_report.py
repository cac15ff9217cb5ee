"""Each test's outcome from a JUnit XML report (node --test's junit reporter, jest-junit,
go-junit-report, cargo nextest, Maven Surefire, pytest --junitxml), read as hostile input.

The report is written by the test runner, in the same sandbox as the code under test, so it is
read like any file the agent could have written: capped in size (read_capped: no symlink, no
FIFO), refused when it holds a document type declaration, and parsed with a cap on depth and
element count.

Why the standard library's parser with a pre-scan, and no defusedxml: expat (behind
xml.etree) expands only entities that a DTD declares, and fetches external entities only for a
DTD; both come into a document through `<!DOCTYPE` alone. The scan refuses `<!DOCTYPE` and
`<!ENTITY` anywhere in the text (case-insensitive), after the bytes have been decoded as UTF-8
and the declared encoding checked to be UTF-8 (or ASCII): a UTF-16 document cannot hide the
declaration from the scan. What remains is the five predefined entities and character
references, which expand to one character each (no billion laughs, no file or network read).

Test ids: the names of the <testsuite> elements that enclose a <testcase> and its own name,
joined by " > " ("math > adds"); with classname=True, its classname attribute, "::" and its name
("tests.test_x::test_y", pytest's --junitxml; Surefire's "pkg.ClassTest::method"); with
classname="jest", the suites, " > ", then its classname and name joined by " › ", which under
jest-junit's JEST_ENV settings is the test file and what jest prints
("test/a.test.js > parseDuration › hours › reads hours"). node's reporter names no file: two
files' tests of the same suite and name are one id (their worst outcome). Outcomes, in pytest's words so that the
same rules apply (ci_eval/grading/testids.py): a <failure> child is FAILED, <error> is ERROR,
<skipped> is SKIPPED, none of them PASSED. A test named twice keeps its worst outcome, so a
forged passing copy cannot hide a failure.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from ci_eval.run.checks.report_file import read_report_file

MAX_JUNIT_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_ELEMENTS = 500_000
ID_SEPARATOR = " > "
JEST_IDS = "jest"  # classname="jest": FILE > what jest prints (jest-junit's settings: JEST_ENV)
JEST_SEPARATOR = " › "
# jest-junit's settings under which its report names each test as jest prints it, in a suite
# named after its file: `test/a.test.js > parseDuration › hours › reads hours`
JEST_ENV = {"JEST_JUNIT_SUITE_NAME": "{filepath}", "JEST_JUNIT_CLASSNAME": "{classname}",
            "JEST_JUNIT_TITLE": "{title}", "JEST_JUNIT_ANCESTOR_SEPARATOR": JEST_SEPARATOR}
_DECLARATION = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_ENCODING = re.compile(r"""^\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']""")
_UTF8_NAMES = {"utf-8", "utf8", "us-ascii", "ascii"}
# worst first: a duplicate id keeps the first of these it was seen with
_SEVERITY = ("ERROR", "FAILED", "SKIPPED", "PASSED")
_CHILD_OUTCOMES = {"failure": "FAILED", "error": "ERROR", "skipped": "SKIPPED"}


class JUnitError(ValueError):
    """A report that cannot be taken as the runner's: too big, a link, not UTF-8, a document
    type declaration, too deep or too many elements, not well-formed XML, no JUnit root."""


def read_junit(path: str | Path, *, classname: bool | str = False) -> dict[str, str] | None:
    """test id -> outcome from the JUnit file at `path`; None when there is no file (the runner
    never wrote it: no evidence the tests ran). JUnitError for a file that cannot be trusted."""
    data = read_report_file(path, MAX_JUNIT_BYTES, JUnitError, "JUnit report")
    if data is None:
        return None
    return parse_junit(data, classname=classname)


def parse_junit(data: bytes, *, classname: bool | str = False) -> dict[str, str]:
    """test id -> outcome from a JUnit document's bytes (see the module's docstring)."""
    text = _checked_text(data)
    parser: ElementTree.XMLPullParser = ElementTree.XMLPullParser(events=("start", "end"))
    outcomes: dict[str, str] = {}
    suites: list[str] = []
    depth = elements = 0
    case: dict | None = None
    try:
        for event, element in _events(parser, text):
            if event == "start":
                depth += 1
                elements += 1
                if depth > MAX_DEPTH:
                    raise JUnitError(f"JUnit report nests deeper than {MAX_DEPTH} elements")
                if elements > MAX_ELEMENTS:
                    raise JUnitError(f"JUnit report has more than {MAX_ELEMENTS} elements")
                if depth == 1 and element.tag not in ("testsuites", "testsuite"):
                    raise JUnitError(f"JUnit report's root is <{element.tag}>, expected "
                                     "<testsuites> or <testsuite>")
                if element.tag == "testsuite":
                    suites.append(element.get("name", ""))
                elif element.tag == "testcase" and case is None:
                    case = {"id": _test_id(element, suites, classname), "outcome": "PASSED",
                            "depth": depth}
                elif case is not None and depth == case["depth"] + 1:
                    found = _CHILD_OUTCOMES.get(element.tag)
                    if found and _worse(found, case["outcome"]):
                        case["outcome"] = found
                continue
            if element.tag == "testsuite" and suites:
                suites.pop()
            elif element.tag == "testcase" and case is not None and depth == case["depth"]:
                test_id, outcome = case["id"], case["outcome"]
                if test_id not in outcomes or _worse(outcome, outcomes[test_id]):
                    outcomes[test_id] = outcome
                case = None
            depth -= 1
            element.clear()
    except ElementTree.ParseError as exc:
        raise JUnitError(f"JUnit report is not well-formed XML ({exc})") from None
    return outcomes


def _events(parser, text: str, chunk: int = 65536):
    """The parser's events, chunk by chunk, so that the caps stop a huge document early."""
    for start in range(0, len(text), chunk):
        parser.feed(text[start:start + chunk])
        yield from parser.read_events()
    parser.close()
    yield from parser.read_events()


def _checked_text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JUnitError(f"JUnit report is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    declared = _ENCODING.match(text.lstrip("\ufeff"))
    if declared and declared.group(1).lower() not in _UTF8_NAMES:
        raise JUnitError(f"JUnit report declares encoding {declared.group(1)!r}, expected UTF-8")
    if _DECLARATION.search(text):
        raise JUnitError("JUnit report holds a document type or entity declaration (refused: "
                         "a runner's report has none)")
    return text.lstrip("\ufeff")


def _test_id(element, suites: list[str], classname: bool | str) -> str:
    name = element.get("name", "")
    if classname == JEST_IDS:
        printed = JEST_SEPARATOR.join(part for part in (element.get("classname", ""), name) if part)
        return ID_SEPARATOR.join([*(s for s in suites if s), printed])
    if classname:
        return f"{element.get('classname', '')}::{name}"
    return ID_SEPARATOR.join([*(s for s in suites if s), name])


def _worse(outcome: str, than: str) -> bool:
    return _SEVERITY.index(outcome) < _SEVERITY.index(than)
