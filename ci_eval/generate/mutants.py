"""SWE-smith-style synthesized bugs (pure: source text in, mutated source texts out), with
Python's own parser: `ast` gives each node's exact span, and a mutant rewrites only the span of
the node it changes (an expression is replaced by its mutated form in parentheses, a statement
by its mutated form at the same indentation), so the rest of the file keeps its bytes and
comments and the solution (the way back) is a minimal diff. No third-party parser needed.

Operators: flip-operator (+ -, * /, == !=, < >=, and or, in / not in, is / is not),
off-by-one (an integer in an index, slice, range() or +/- moves by one), change-constant
(True/False swapped, another number changed), drop-branch (an else dropped, or an if without
one removed), swap-if-else, remove-assignment."""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass

OPERATORS = ("flip-operator", "off-by-one", "change-constant", "drop-branch", "swap-if-else",
             "remove-assignment")
_FLIP: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
                           ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Eq: ast.NotEq,
                           ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
                           ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In,
                           ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.And: ast.Or,
                           ast.Or: ast.And}


@dataclass(frozen=True)
class Function:
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Mutant:
    function: str  # qualified name
    operator: str
    line: int
    description: str
    source: str  # the whole file, mutated


def functions(tree: ast.Module) -> list[Function]:
    found: list[Function] = []

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(Function(prefix + node.name, node))
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return found


def names_used(tree: ast.AST) -> set[str]:
    """Every identifier a piece of code refers to (names and attributes)."""
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name.split(".")[-1])
    return used


def reached(test_names: set[str], sources: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """(file, qualname) of the functions the tests reach, by name: named in a test file, or
    named by a function already reached (a static closure; the runs then prove it: a mutant
    no test notices is rejected). Dunder methods count when their class is reached."""
    funcs = [(path, f) for path, tree in sources.items() for f in functions(tree)]
    names, reach = set(test_names), set()
    changed = True
    while changed:
        changed = False
        for path, func in funcs:
            owner = func.qualname.rsplit(".", 1)[0] if "." in func.qualname else ""
            name = func.node.name
            hit = name in names or (name.startswith("__") and owner.split(".")[-1] in names)
            if hit and (path, func.qualname) not in reach:
                reach.add((path, func.qualname))
                names |= names_used(func.node)
                changed = True
    return reach


class _Text:
    """The file's text addressed by ast positions (line, UTF-8 byte column)."""

    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", "replace"))

    def replace(self, node: ast.expr, text: str) -> str:
        line, col, end_line, end_col = _span(node)
        return self.source[:self.offset(line, col)] + text + self.source[self.offset(end_line, end_col):]

    def replace_statement(self, node: ast.stmt, new: list[ast.stmt] | None) -> str | None:
        """The statement's whole lines replaced by `new` (None: `pass`) at its indentation;
        None when the statement shares a line with another."""
        line, col, end_line, end_col = _span(node)
        first, last = self.lines[line - 1], self.lines[end_line - 1]
        if first[:self.offset(line, col) - self.starts[line - 1]].strip():
            return None
        rest = last.encode("utf-8")[end_col:].decode("utf-8", "replace")
        if rest.strip() and not rest.strip().startswith("#"):
            return None
        indent = first[:len(first) - len(first.lstrip())]
        body = "pass" if not new else "\n".join(ast.unparse(stmt) for stmt in new)
        text = "".join(indent + line + "\n" for line in body.splitlines())
        return self.source[:self.starts[line - 1]] + text + self.source[self.starts[end_line]:]


def _span(node: ast.expr | ast.stmt) -> tuple[int, int, int, int]:
    """(line, column, end line, end column) of a parsed node (ast.parse sets the ends)."""
    end_line = node.end_lineno if node.end_lineno is not None else node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return node.lineno, node.col_offset, end_line, end_col


def _in_fstring(func: ast.AST) -> set[int]:
    inside = set()
    for node in ast.walk(func):
        if isinstance(node, ast.JoinedStr):
            inside |= {id(n) for n in ast.walk(node)}
    return inside


def _expression_mutants(func: ast.AST, text: _Text) -> list[tuple[str, int, str, str]]:
    found: list[tuple[str, ast.expr, ast.expr, str]] = []
    skip = _in_fstring(func)
    index_ints = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Subscript):
            index_ints |= {id(n) for n in ast.walk(node.slice)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "range":
            index_ints |= {id(n) for arg in node.args for n in ast.walk(arg)}
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            index_ints |= {id(node.left), id(node.right)}
    for node in ast.walk(func):
        if id(node) in skip or not isinstance(node, ast.expr):  # every mutated node is one
            continue
        if isinstance(node, (ast.BinOp, ast.BoolOp)) and type(node.op) in _FLIP:
            new = copy.deepcopy(node)
            new.op = _FLIP[type(node.op)]()
            found.append(("flip-operator", node, new,
                          f"{type(node.op).__name__} -> {type(new.op).__name__}"))
        elif isinstance(node, ast.Compare):
            for at, op in enumerate(node.ops):
                if type(op) in _FLIP:
                    changed = copy.deepcopy(node)
                    changed.ops[at] = _FLIP[type(op)]()
                    flipped = type(changed.ops[at]).__name__
                    found.append(("flip-operator", node, changed,
                                  f"{type(op).__name__} -> {flipped}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            found.append(("change-constant", *_changed_constant(node, not node.value)))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            if id(node) in index_ints:
                found.append(("off-by-one", *_changed_constant(node, node.value + 1)))
            elif node.value not in (0, 1):
                found.append(("change-constant", *_changed_constant(node, node.value * 2)))
    results = []
    for operator, before, after, description in found:
        results.append((operator, before.lineno, description,
                        text.replace(before, "(" + ast.unparse(after) + ")")))
    return results


def _changed_constant(node: ast.Constant, value: bool | int) -> tuple[ast.Constant, ast.Constant,
                                                                      str]:
    """(the node, a copy holding `value`, what changed)."""
    new = copy.deepcopy(node)
    new.value = value
    return node, new, f"{node.value!s} -> {value}"


def _statement_mutants(func: ast.AST, text: _Text) -> list[tuple[str, int, str, str | None]]:
    found = []
    for node in ast.walk(func):
        if node is func:
            continue
        if isinstance(node, ast.If):
            if node.orelse:
                swapped = ast.If(test=node.test, body=node.orelse, orelse=node.body)
                found.append(("swap-if-else", node.lineno, "if/else bodies swapped",
                              text.replace_statement(node, [swapped])))
                dropped = ast.If(test=node.test, body=node.body, orelse=[])
                found.append(("drop-branch", node.lineno, "else branch dropped",
                              text.replace_statement(node, [dropped])))
            else:
                found.append(("drop-branch", node.lineno, "if statement removed",
                              text.replace_statement(node, None)))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            found.append(("remove-assignment", node.lineno, "assignment removed",
                          text.replace_statement(node, None)))
    return found


def mutants(source: str, function: Function) -> list[Mutant]:
    """Every mutant of `function` in `source` that still compiles and changes the code."""
    text = _Text(source)
    original = ast.dump(ast.parse(source))
    found, seen = [], set()
    for operator, line, description, mutated in (_expression_mutants(function.node, text)
                                                 + _statement_mutants(function.node, text)):
        if mutated is None or mutated in seen:
            continue
        try:
            if ast.dump(ast.parse(mutated)) == original:
                continue
            compile(mutated, "<mutant>", "exec")
        except (SyntaxError, ValueError):
            continue
        seen.add(mutated)
        found.append(Mutant(function.qualname, operator, line, description, mutated))
    return found


def pick(candidates: list[Mutant], per_operator: int = 1) -> list[Mutant]:
    """At most `per_operator` mutants of each operator, the first ones (by line)."""
    counts: dict[str, int] = {}
    chosen = []
    for mutant in sorted(candidates, key=lambda m: (OPERATORS.index(m.operator), m.line)):
        if counts.get(mutant.operator, 0) < per_operator:
            counts[mutant.operator] = counts.get(mutant.operator, 0) + 1
            chosen.append(mutant)
    return chosen


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
