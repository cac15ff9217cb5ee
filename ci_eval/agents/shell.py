"""A `command` string in ci-eval.yaml (and --agent-cmd) is a bash script, run as
`bash -c SCRIPT` like a workflow `run:` step: $VARS, pipes and redirections work. Two pure helpers
for it, both conservative (they never reject or misname something bash would accept):

    unclosed_quote("claude -p 'hi")     # -> "unclosed ' quote": bash would fail at once
    first_program("FOO=1 ./agent.sh x") # -> "./agent.sh": what the script starts, for preflight
    plain_argv("claude -p 'say hi'")    # -> ("claude", "-p", "say hi"); None if it needs bash

plain_argv: a string with no shell syntax at all (no $, `, |, &, ;, <, >, (, ), globs, ~, #,
backslash, newline; no VAR=value or builtin first) means the same run directly as through
bash -c: bash would only look the program up and exec it with those words. Running it directly
also keeps a relative program path (./agents/claude.sh) relative to the repo root, as a workflow
`run:` step's working directory would.

Neither runs bash. A script unclosed_quote accepts may still be bad bash; bash says so at run
time (`bash -n -c SCRIPT` in preflight would catch it without running it).
"""

from __future__ import annotations

import re
import shlex

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=(?:[A-Za-z0-9_./:@%+,-]*)\s+")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:@%+,~-]+(?=\s|$|;|&|\|)")
_NOT_PROGRAMS = frozenset({
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]", ".", "source", "eval",
    "exec", "cd", "export", "set", "unset", "local", "declare", "readonly", "trap", "shopt",
    "alias", "builtin", "command", "true", "false", ":", "test", "[",
})
_BUILTINS = frozenset({  # bash runs these itself: no program of that name is looked up
    "exit", "return", "echo", "printf", "read", "wait", "kill", "pwd", "type", "hash", "umask",
    "ulimit", "shift", "let", "history", "jobs", "fg", "bg", "disown", "suspend", "times",
    "getopts", "mapfile", "readarray", "enable", "help", "logout", "popd", "pushd", "dirs",
    "caller", "compgen", "complete", "compopt", "bind", "fc",
})


# What matters for quoting outside double quotes; group 1 or 2 is a string's closing quote ("":
# none, the script ends inside it).
_IN_CODE = re.compile(r"""
    \\.                        # an escaped character
  | \$'(?:[^'\\]|\\.)*('?)     # $'...', where \' does not close it
  | '[^']*('?)                # '...'
  | \$\( | [`"()]              # what opens or closes a context
  | (?<![^\s;&|()])\#[^\n]*     # a comment, to the end of the line
""", re.DOTALL | re.VERBOSE)
_IN_DOUBLE = re.compile(r'\\.|"|\$\(|`', re.DOTALL)  # inside "...": ' and # are plain text
# inside `...`: only the closing backquote counts. Bash finds it first and parses what is
# between only when it runs the command (`bash -n` never does), so quotes there prove nothing.
_IN_TICK = re.compile(r"\\.|`", re.DOTALL)


_SCANNERS = {"dq": _IN_DOUBLE, "tick": _IN_TICK}


def unclosed_quote(script: str) -> str | None:
    """"unclosed ' quote" / "unclosed \" quote" when script surely ends inside a quote, else None."""
    if "<<" in script:
        return None  # here-documents: quote characters in their bodies are plain text
    stack = ["top"]  # what each token is read in: top, cmd ($(), paren (inside it), tick, dq
    pos = 0
    while match := _SCANNERS.get(stack[-1], _IN_CODE).search(script, pos):
        token, pos = match.group(), match.end()
        if token[0] == "'" or token.startswith("$'"):
            if not (match.group(1) or match.group(2)):
                return "unclosed ' quote"
        elif token in ('"', "`"):
            kind = "dq" if token == '"' else "tick"
            if stack[-1] == kind:
                stack.pop()
            else:
                stack.append(kind)
        elif token == "$(" or (token == "(" and stack[-1] in ("cmd", "paren")):
            stack.append("cmd" if token == "$(" else "paren")
        elif token == ")" and stack[-1] in ("cmd", "paren"):
            stack.pop()
    return 'unclosed " quote' if stack[-1] == "dq" else None


_SHELL_SYNTAX = re.compile(r"[$`|&;<>(){}*?\[\]~!#\\\n\r]")


def plain_argv(script: str) -> tuple[str, ...] | None:
    """The argv bash would exec for a script without shell syntax, or None when it needs bash."""
    if _SHELL_SYNTAX.search(script) or unclosed_quote(script):
        return None
    try:
        words = tuple(shlex.split(script))
    except ValueError:
        return None
    if not words or "=" in words[0] or words[0] in _NOT_PROGRAMS or words[0] in _BUILTINS:
        return None
    return words


def first_program(script: str) -> str | None:
    """The program a script starts with (after VAR=value prefixes), or None when it starts with
    anything else (a keyword, a builtin, a quote, an expansion, a subshell)."""
    rest = script.lstrip()
    while (assignment := _ASSIGNMENT.match(rest)):
        rest = rest[assignment.end():]
    word = _PLAIN_WORD.match(rest)
    if not word or word.group() in _NOT_PROGRAMS or word.group() in _BUILTINS:
        return None
    return word.group()

