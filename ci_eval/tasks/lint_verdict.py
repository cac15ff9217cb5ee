"""The `verdict` rule of the checks lint: a checks.py that imports ci_eval.checks and never hands
them a verdict.

A checks.py says pass or fail only by exiting: `main(...)` of ci_eval.checks (which exits),
`sys.exit(...)`, `exit()` / `quit()`, `raise SystemExit`. One that runs to its end is an error of
the task at run time (ci_eval/run/checks/checks_program.py); this finds the usual cause before
any run: the helpers are imported, but no module-level code reaches such an exit (main(...)
forgotten, or only called in a function nobody calls). Reaching: a verdict call in module-level
code (outside function and class bodies), or a call there of a module-level function that makes
one, directly or through other such functions.
"""

from __future__ import annotations

import ast

HELPERS = "ci_eval.checks"
EXIT_CALLS = {"sys.exit", "exit", "quit"}


def missing_verdict(tree: ast.Module) -> int | None:
    """The line of the ci_eval.checks import when checks.py never reaches a verdict, else None."""
    helpers_line = _helpers_import_line(tree)
    if helpers_line is None:
        return None
    aliases = _aliases(tree)
    functions = {node.name: node for node in tree.body
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    giving: set[str] = set()
    changed = True
    while changed:  # a function gives a verdict if it makes one or calls one that does
        changed = False
        for name, node in functions.items():
            if name not in giving and _reaches(ast.walk(node), aliases, giving):
                giving.add(name)
                changed = True
    if _reaches(_module_level(tree), aliases, giving):
        return None
    return helpers_line


def _helpers_import_line(tree: ast.Module) -> int | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == HELPERS or node.module.startswith(HELPERS + ".")):
            return node.lineno
        if isinstance(node, ast.Import) and any(
                a.name == HELPERS or a.name.startswith(HELPERS + ".") for a in node.names):
            return node.lineno
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """local name -> what it names: `main` -> ci_eval.checks.main, `ex` -> sys.exit."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _module_level(tree: ast.Module):
    """Every node of module-level code: function and class bodies left out (their decorators,
    defaults and bases run, but a verdict there would be odd enough to leave to a marker)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _reaches(nodes, aliases: dict[str, str], giving: set[str]) -> bool:
    for node in nodes:
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if _name(target, aliases) in ("SystemExit", "builtins.SystemExit"):
                return True
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func, aliases)
        if name is None:
            continue
        if name in EXIT_CALLS or name in giving or (
                name.startswith(HELPERS + ".") and name.endswith(".main")):
            return True
    return False


def _name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id, node.id)
    return ".".join([base, *reversed(parts)])
