"""The one JUnit XML shape both `report` and `compare` write: <testsuites><testsuite> with one
<testcase classname="ci-eval.SUITE" name="TASK"> per task. A <failure> means exactly what the
command's exit code 1 means (report: the task is inconclusive; compare: the task fails the
gate), so a CI's test view and its red X agree; <skipped> marks tasks never gated; the evidence
is in <system-out>."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

# what XML 1.0 cannot hold at all (not even as a character reference)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: each character it cannot shown as an escape (\\x1b)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", str(text))


@dataclass(frozen=True)
class Case:
    name: str
    evidence: str
    failure: tuple[str, str] | None = None  # (type, message)
    skipped: str | None = None
    seconds: float | None = None


def render_cases(suite: str, cases: list[Case], notices: tuple[str, ...] = ()) -> str:
    failures = sum(1 for c in cases if c.failure)
    skipped = sum(1 for c in cases if c.skipped and not c.failure)
    root = ET.Element("testsuites", {"name": "ci-eval", "tests": str(len(cases)),
                                     "failures": str(failures), "errors": "0"})
    element = ET.SubElement(root, "testsuite", {
        "name": xml_text(f"ci-eval {suite}"), "tests": str(len(cases)), "failures": str(failures),
        "errors": "0", "skipped": str(skipped)})
    for case in cases:
        attrs = {"classname": xml_text(f"ci-eval.{suite}"), "name": xml_text(case.name)}
        if case.seconds is not None:
            attrs["time"] = f"{case.seconds:.3f}"
        node = ET.SubElement(element, "testcase", attrs)
        if case.failure:
            kind, message = case.failure
            kind, message = xml_text(kind), xml_text(message)
            ET.SubElement(node, "failure", {"type": kind, "message": message}).text = message
        elif case.skipped:
            ET.SubElement(node, "skipped", {"message": xml_text(case.skipped)})
        ET.SubElement(node, "system-out").text = xml_text(case.evidence)
    if notices:
        ET.SubElement(element, "system-err").text = xml_text("\n".join(notices))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
