"""CHANGELOG: a Fixed entry for #212 (timeout) under [Unreleased]; released sections untouched.

A text deliverable, so text checks, but not keyword spotting: the existing [Unreleased] entries
must stay word for word, and the new entry must be a readable sentence (four words or more besides
the issue reference) that names the timeout and the issue (#212, issue 212, GH-212 or a link to
.../issues/212 all count).

Claims in the text are read too, as far as structure can tell: the entry must name the function
that was fixed, `fetch()` (an entry about `fetch_json()` alone names the wrong one); a wait it
quotes must be the 30 seconds of the report; and it must not state the fix backwards ("now always
waits 30 seconds instead of honouring its timeout", "no longer honours"). Whether the sentence
says the right thing in words structure cannot parse is the rubric's manual criterion. The
request is a changelog entry: the code (fetchkit/) must stay as it is.
"""

import re
from pathlib import Path

from ci_eval.checks import failed, main, passed, task_dir

ORIGINAL = (task_dir() / "repo-state" / "CHANGELOG.md").read_text()
ISSUE = re.compile(r"#212\b|\bissue\s+212\b|\bGH-212\b|/issues/212\b", re.IGNORECASE)
WORD = re.compile(r"[A-Za-z]{2,}")
FETCH = re.compile(r"(?<![\w.])(?:fetchkit\.)?fetch\b(?!_)")  # fetch / fetchkit.fetch, not fetch_json
SECONDS = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b", re.IGNORECASE)
HONOUR = r"(?:honou?r|respect|obey|us|appl|pass|forward|observ)\w*"
BACKWARDS = [
    re.compile(r"\b(?:instead of|rather than|no longer)\s+(?:\w+\s+){0,2}?" + HONOUR, re.I),
    re.compile(r"\bnow\s+(?:always\s+(?:ignor|wait)\w*|ignor\w*)", re.I),
    re.compile(r"\b(?:no longer|not|never|doesn't|does not)\s+(?:\w+\s+){0,2}?" + HONOUR
               + r"[^.]*\btimeout", re.I),
]


def sections(text: str) -> list[tuple[str, str]]:
    """[(heading, body)] for each `## ` section; the preamble has heading ''."""
    parts = re.split(r"(?m)^(## .*)$", text)
    out = [("", parts[0])]
    out += [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]
    return out


def subsections(body: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = None
    for line in body.splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
            if current in found:
                found[current].append("<<duplicate heading>>")
            found.setdefault(current, [])
        elif current and line.strip().startswith(("- ", "* ")):
            found[current].append(line.strip()[2:])
    return found


def check_changelog():
    path = Path("CHANGELOG.md")
    if not path.is_file():
        return failed("CHANGELOG.md is missing")
    new, old = sections(path.read_text()), sections(ORIGINAL)
    if new[0][1].strip() != old[0][1].strip():
        return failed("the changelog preamble changed")
    if len(new) < 2 or new[1][0] != "## [Unreleased]":
        return failed(f"the first version section must stay '## [Unreleased]', found {new[1][0]!r}"
                      if len(new) > 1 else "no version sections left")
    if [h for h, _ in new[2:]] != [h for h, _ in old[2:]]:
        return failed(f"released sections changed: {[h for h, _ in new[2:]]} != "
                      f"{[h for h, _ in old[2:]]} (the fix is unreleased)")
    for (heading, body), (_, old_body) in zip(new[2:], old[2:]):
        if body.strip() != old_body.strip():
            return failed(f"section {heading!r} was edited; released entries must not change")
    unreleased = subsections(new[1][1])
    if any("<<duplicate heading>>" in items for items in unreleased.values()):
        return failed("[Unreleased] repeats a ### heading")
    for kind, items in subsections(old[1][1]).items():
        lost = [e for e in items if e not in unreleased.get(kind, [])]
        if lost:
            return failed(f"the existing [Unreleased] {kind!r} entries must stay as they are; "
                          f"missing or changed: {lost}")
    fixed = unreleased.get("Fixed", [])
    entry = [e for e in fixed if ISSUE.search(e) and re.search(r"timeout", e, re.IGNORECASE)]
    if not entry:
        return failed("no '### Fixed' entry under [Unreleased] that mentions the timeout and #212 "
                      f"(Fixed entries: {fixed})")
    if not any(len(WORD.findall(ISSUE.sub("", e))) >= 4 for e in entry):
        return failed(f"the #212 entry {entry[0]!r} is keywords, not a sentence a reader of the "
                      "changelog can understand")
    other = {k: v for k, v in unreleased.items() if k != "Fixed" and any(ISSUE.search(e) for e in v)}
    if other:
        return failed(f"#212 is a fix but also appears under {sorted(other)}")
    return check_claims(entry[0])


def check_claims(entry: str):
    if not FETCH.search(entry):
        return failed(f"the #212 entry {entry!r} does not name the function that was fixed, "
                      "fetch() (the report is about fetchkit.fetch)")
    waits = [float(n) for n in SECONDS.findall(entry)]
    if any(n != 30 for n in waits):
        return failed(f"the #212 entry {entry!r} quotes a wait of {waits} seconds; fetch() "
                      "waited 30")
    for pattern in BACKWARDS:
        found = pattern.search(entry)
        if found:
            return failed(f"the #212 entry {entry!r} states the fix backwards ({found.group(0)!r}:"
                          " the fix is that fetch() now honours its timeout)")
    return passed("Fixed entry for #212 under [Unreleased]")


def check_code_untouched():
    for original in sorted((task_dir() / "repo-state" / "fetchkit").rglob("*.py")):
        rel = original.relative_to(task_dir() / "repo-state")
        if not Path(rel).is_file() or Path(rel).read_bytes() != original.read_bytes():
            return failed(f"{rel} changed: the fix is merged, the request is a changelog entry")
    return passed("fetchkit/ unchanged")


main(check_changelog, check_code_untouched)
