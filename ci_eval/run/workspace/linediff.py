"""A unified line diff whose cost is bounded whatever the two texts are.

difflib's SequenceMatcher is quadratic (and worse) in the lines it has to match: changing every
other line of a 16000-line file took minutes, and a diff runs in the harness, on files the agent
wrote. Here:

1. the common first and last lines are matched without difflib;
2. a middle small enough (old lines x new lines within the budget left, CELL_BUDGET per file) is
   matched by difflib;
3. a larger middle is split at the lines that occur exactly once in both texts and keep their
   order (patience diff's anchors: cheap, and what people see as unchanged), and each piece
   goes through 1-3 again;
4. a piece without such lines, or once the budget is spent, is shown as replaced whole: a
   correct diff, only not the smallest one.

The output has difflib.unified_diff's shape (`--- a`, `+++ b`, `@@ -l,n +l,n @@`, lines with
' ', '-', '+'), so people and tools read it the same way.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter

CELL_BUDGET = 2_000_000  # old x new lines matched by difflib, per file (about a second)
MAX_DEPTH = 8  # splits at anchors, nested
Opcode = tuple[str, int, int, int, int]


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str,
                 context: int = 3) -> list[str]:
    """Lines of a unified diff from a to b (both lists of lines with their line ends)."""
    groups = _grouped(_opcodes(a, b), context)
    if not groups:
        return []
    out = [f"--- {fromfile}\n", f"+++ {tofile}\n"]
    for group in groups:
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            out += ["-" + line for line in a[i1:i2]]
            out += ["+" + line for line in b[j1:j2]]
    return out


def _opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes turning a into b, in order."""
    budget = CELL_BUDGET
    done: list[Opcode] = []
    todo: list[tuple] = [("range", 0, len(a), 0, len(b), 0)]  # a stack: the next item last
    while todo:
        item = todo.pop()
        if item[0] != "range":
            done.append(item)
            continue
        _, a0, a1, b0, b1, depth = item
        start_a, start_b = a0, b0
        while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
            a0, b0 = a0 + 1, b0 + 1
        end_a, end_b = a1, b1
        while a1 > a0 and b1 > b0 and a[a1 - 1] == b[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
        later: list[tuple] = []  # in order; pushed reversed below
        if a0 > start_a:
            later.append(("equal", start_a, a0, start_b, b0))
        cells = (a1 - a0) * (b1 - b0)
        if a0 == a1 and b0 == b1:
            pass
        elif a0 == a1 or b0 == b1:
            later.append(("delete" if b0 == b1 else "insert", a0, a1, b0, b1))
        elif cells <= budget:
            budget -= cells
            matcher = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1])
            later += [(tag, i1 + a0, i2 + a0, j1 + b0, j2 + b0)
                      for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
        else:
            anchors = _anchors(a, b, a0, a1, b0, b1) if depth < MAX_DEPTH else []
            if not anchors:
                later.append(("replace", a0, a1, b0, b1))
            else:
                i, j = a0, b0
                for ai, bj in anchors:
                    later.append(("range", i, ai, j, bj, depth + 1))
                    later.append(("equal", ai, ai + 1, bj, bj + 1))
                    i, j = ai + 1, bj + 1
                later.append(("range", i, a1, j, b1, depth + 1))
        if a1 < end_a:
            later.append(("equal", a1, end_a, b1, end_b))
        todo += reversed(later)
    return _merged(done)


def _anchors(a, b, a0, a1, b0, b1) -> list[tuple[int, int]]:
    """(i, j) of lines that occur once in a[a0:a1] and once in b[b0:b1], the longest run of
    them in the same order in both."""
    count_a = Counter(a[a0:a1])
    count_b = Counter(b[b0:b1])
    where_b = {b[j]: j for j in range(b0, b1) if count_b[b[j]] == 1}
    pairs = [(i, where_b[a[i]]) for i in range(a0, a1)
             if count_a[a[i]] == 1 and a[i] in where_b]
    # longest increasing subsequence of the j's (patience sorting)
    tails: list[int] = []  # smallest j ending a run of each length
    ends: list[int] = []  # index into pairs of that run's end
    before = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        slot = bisect.bisect_left(tails, j)
        if slot == len(tails):
            tails.append(j)
            ends.append(k)
        else:
            tails[slot] = j
            ends[slot] = k
        before[k] = ends[slot - 1] if slot else -1
    run = []
    k = ends[-1] if ends else -1
    while k >= 0:
        run.append(pairs[k])
        k = before[k]
    return run[::-1]


def _merged(codes: list[Opcode]) -> list[Opcode]:
    out: list[Opcode] = []
    for code in codes:
        if code[1] == code[2] and code[3] == code[4]:
            continue
        if out and out[-1][0] == code[0] == "equal":
            last = out[-1]
            out[-1] = ("equal", last[1], code[2], last[3], code[4])
        else:
            out.append(code)
    return out


def _grouped(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """Hunks with n lines of context (difflib's get_grouped_opcodes); [] when nothing changed."""
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups, group = [], []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _range(start: int, stop: int) -> str:
    """difflib's unified range: 'l,n', or 'l' for one line, counted from 1 (from 0 when n=0)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
