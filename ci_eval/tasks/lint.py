"""Static lint of a task's checks.py against the checks contract: checks must be deterministic.

`lint_checks(path) -> list[Finding]`; each finding prints as `path:line: message [rule]`.
`ci-eval validate` runs it on every task and reports findings as problems (exit 2).

Rules (the name in brackets is what an allow marker names):

- `llm-sdk`   importing an LLM SDK (openai, anthropic, google.generativeai, google.genai,
              vertexai, cohere, mistralai, litellm, langchain*, llama_index, groq, together,
              replicate, ollama, transformers, huggingface_hub, dspy, instructor, ...).
              A check that asks a model is neither deterministic nor free.
- `network`   importing a network client (socket, ssl, requests, httpx, urllib.request, urllib3,
              http.client, aiohttp, ftplib, smtplib, poplib, imaplib, telnetlib, xmlrpc.client,
              websocket(s), paramiko, boto3, grpc, pycurl, ...). Checks run offline.
- `random`    unseeded randomness: calling module-level `random.*` functions (random, choice,
              shuffle, randint, ...) in a module that never calls `random.seed(<value>)`;
              `random.Random()` without a seed; `random.SystemRandom`, `secrets`, `os.urandom`,
              `uuid.uuid1/uuid4`; numpy.random the same way (`np.random.seed(<value>)` or
              `default_rng(<seed>)` make it fine).
- `wall-clock` reading the current date or time: datetime.now/utcnow/today, date.today,
              time.time, time.time_ns, and time.localtime/gmtime/ctime/asctime without an explicit
              argument, time.strftime without an explicit time tuple. (time.monotonic and
              time.perf_counter measure durations and are allowed.)
- `verdict`   checks.py imports ci_eval.checks and no module-level code reaches a verdict
              (main(...), sys.exit, raise SystemExit): it would run to its end, an error of
              the task (lint_verdict.py).
- `junit-ids` run_junit_tests runs jest without classname="jest": its ids would match nothing
              jest prints (lint_junit.py).
- `syntax`    checks.py does not parse.
- `marker`    an allow marker names a rule that does not exist.

Imports are found anywhere in the module (also inside functions), in every form: `import x.y`,
`import x as y`, `from x import y`, `__import__("x")`, `importlib.import_module("x")`. Calls are
resolved through import aliases (`from datetime import datetime as dt; dt.now()` is found).
It is a lint, not a sandbox: code that hides what it does (getattr, exec) is not followed.

Opt-out, per line: a comment on the reported line (the first line of the statement)

    stamp = time.time()  # ci-eval: allow[wall-clock]      only these rules (comma-separated)
    import socket        # ci-eval: allow                  every rule on this line

Use it when the code is deterministic in fact (e.g. a time read used only in a log message).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ci_eval.tasks.lint_junit import unstable_jest_ids
from ci_eval.tasks.lint_verdict import missing_verdict

RULES = ("llm-sdk", "network", "random", "wall-clock", "verdict", "junit-ids", "syntax",
         "marker")

LLM_SDKS = (
    "openai",
    "anthropic",
    "google.generativeai",
    "google.genai",
    "google.ai.generativelanguage",
    "vertexai",
    "cohere",
    "mistralai",
    "litellm",
    "langchain*",
    "llama_index",
    "llama_cpp",
    "groq",
    "together",
    "replicate",
    "fireworks",
    "ollama",
    "transformers",
    "huggingface_hub",
    "dspy",
    "instructor",
    "guidance",
    "ai21",
    "voyageai",
    "deepseek",
    "xai_sdk",
    "claude_agent_sdk",
    "claude_code_sdk",
)
NETWORK_MODULES = (
    "socket",
    "ssl",
    "requests",
    "httpx",
    "urllib.request",
    "urllib3",
    "http.client",
    "aiohttp",
    "ftplib",
    "smtplib",
    "poplib",
    "imaplib",
    "nntplib",
    "telnetlib",
    "xmlrpc.client",
    "websocket",
    "websockets",
    "paramiko",
    "boto3",
    "botocore",
    "grpc",
    "pycurl",
    "httplib2",
    "tornado.httpclient",
    "twisted.internet",
    "asyncssh",
)
RANDOM_FUNCTIONS = {
    "random",
    "uniform",
    "triangular",
    "randint",
    "randrange",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "getrandbits",
    "randbytes",
    "gauss",
    "normalvariate",
    "lognormvariate",
    "expovariate",
    "vonmisesvariate",
    "gammavariate",
    "betavariate",
    "paretovariate",
    "weibullvariate",
    "binomialvariate",
}
NUMPY_RANDOM_SEEDABLE = {"default_rng", "RandomState", "Generator", "SeedSequence"}
NUMPY_RANDOM_OK = {"seed", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "BitGenerator"}
ALWAYS_RANDOM_CALLS = {"os.urandom", "uuid.uuid1", "uuid.uuid4", "random.SystemRandom"}
WALL_CLOCK_ALWAYS = {
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
    "time.time",
    "time.time_ns",
}
WALL_CLOCK_WITHOUT_ARGS = {"time.localtime", "time.gmtime", "time.ctime", "time.asctime"}

_MARKER = re.compile(r"#\s*ci-eval:\s*allow(?:\[([^\]]*)\])?", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    rule: str
    message: str  # ends with " [rule]"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def lint_checks(path: Path | str) -> list[Finding]:
    """Findings for one checks.py, sorted by line. Unreadable file = a `syntax` finding."""
    path = Path(path)
    try:
        source = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Finding(path, 1, "syntax", f"cannot read checks.py ({exc}) [syntax]")]
    return lint_source(source, path)


def lint_source(source: str, path: Path | str = "checks.py") -> list[Finding]:
    """Like lint_checks, for source text (path is only used in the findings)."""
    path = Path(path)
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        return [
            Finding(
                path, exc.lineno or 1, "syntax", f"checks.py does not parse: {exc.msg} [syntax]"
            )
        ]
    allowed, marker_findings = _allow_markers(source, path)
    raw = _Linter(path).run(tree)
    line = missing_verdict(tree)
    if line is not None:
        raw.append(Finding(path, line, "verdict", "checks.py never hands ci_eval.checks a "
                           "verdict: no module-level main(...) or sys.exit(...) is reached, so it "
                           "would end without one (an error of the task) [verdict]"))
    raw += [Finding(path, line, "junit-ids", message) for line, message in unstable_jest_ids(tree)]
    kept = [
        f
        for f in raw
        if not (f.line in allowed and ((rules := allowed[f.line]) is None or f.rule in rules))
    ]
    findings = kept + marker_findings
    unique = {(f.line, f.rule, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.rule, f.message))


def _allow_markers(source: str, path: Path) -> tuple[dict[int, set[str] | None], list[Finding]]:
    """line -> allowed rule names (None = all), plus findings for unknown rule names."""
    allowed: dict[int, set[str] | None] = {}
    findings: list[Finding] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return allowed, findings
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = _MARKER.search(token.string)
        if not match:
            continue
        line = token.start[0]
        if match.group(1) is None:
            allowed[line] = None
            continue
        names = {n.strip() for n in match.group(1).split(",") if n.strip()}
        for name in sorted(names - set(RULES)):
            findings.append(
                Finding(
                    path,
                    line,
                    "marker",
                    f"unknown rule {name!r} in allow marker "
                    f"(rules: {', '.join(RULES[:5])}) [marker]",
                )
            )
        if allowed.get(line, set()) is not None:
            allowed[line] = (allowed.get(line) or set()) | names
    return allowed, findings


def _matches(module: str, entries: tuple[str, ...]) -> str | None:
    for entry in entries:
        if entry.endswith("*"):
            if module.split(".")[0].startswith(entry[:-1]):
                return module.split(".")[0]
        elif module == entry or module.startswith(entry + "."):
            return entry
    return None


class _Linter(ast.NodeVisitor):
    def __init__(self, path: Path):
        self.path = path
        self.aliases: dict[str, str] = {}  # local name -> dotted module/object path
        self.findings: list[Finding] = []
        self.random_calls: list[tuple[int, str]] = []
        self.numpy_calls: list[tuple[int, str]] = []
        self.random_seeded = False
        self.numpy_seeded = False

    def run(self, tree: ast.AST) -> list[Finding]:
        # Aliases first (module-wide, ignoring scope), so calls before a late import resolve.
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        self.visit(tree)
        if not self.random_seeded:
            for line, name in self.random_calls:
                self._add(
                    line,
                    "random",
                    f"{name}() in a module that never calls random.seed(<value>) "
                    "(seed it, or use random.Random(<seed>))",
                )
        if not self.numpy_seeded:
            for line, name in self.numpy_calls:
                self._add(
                    line,
                    "random",
                    f"{name}() without numpy.random.seed(<value>) (use default_rng(<seed>))",
                )
        return self.findings

    def _add(self, line: int, rule: str, message: str) -> None:
        self.findings.append(Finding(self.path, line, rule, f"{message} [{rule}]"))

    # imports ---------------------------------------------------------------------------------

    def _check_module(self, module: str, line: int) -> None:
        hit = _matches(module, LLM_SDKS)
        if hit:
            self._add(line, "llm-sdk", f"imports {module!r}: LLM SDKs are not allowed in checks")
            return
        hit = _matches(module, NETWORK_MODULES)
        if hit:
            self._add(line, "network", f"imports {module!r}: checks must not use the network")
            return
        if module == "secrets" or module.startswith("secrets."):
            self._add(line, "random", f"imports {module!r}: unseedable randomness")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        before = len(self.findings)
        self._check_module(node.module, node.lineno)
        if len(self.findings) == before:
            # `from urllib import request`, `from google import genai`: names may be submodules.
            for alias in node.names:
                if alias.name != "*":
                    self._check_module(f"{node.module}.{alias.name}", node.lineno)

    # calls -----------------------------------------------------------------------------------

    def _resolve(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.aliases.get(node.id)
        if base is None:
            return None
        return ".".join([base] + list(reversed(parts)))

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        line = node.lineno
        is_dunder = isinstance(node.func, ast.Name) and node.func.id == "__import__"
        name = self._resolve(node.func)
        if (is_dunder or name == "importlib.import_module") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._check_module(first.value, line)
        if name is None:
            return
        nargs = len(node.args) + len(node.keywords)
        # wall clock
        if name in WALL_CLOCK_ALWAYS:
            self._add(line, "wall-clock", f"{name}() reads the wall clock")
        elif name in WALL_CLOCK_WITHOUT_ARGS and not node.args:
            self._add(line, "wall-clock", f"{name}() without an argument reads the wall clock")
        elif name == "time.strftime" and len(node.args) < 2:
            self._add(
                line, "wall-clock", "time.strftime() without a time tuple reads the wall clock"
            )
        # randomness
        if name in ALWAYS_RANDOM_CALLS:
            self._add(line, "random", f"{name}() is unseedable randomness")
        elif name == "random.seed":
            if nargs:
                self.random_seeded = True
        elif name == "random.Random":
            if not nargs:
                self._add(line, "random", "random.Random() without a seed")
        elif name.startswith("random.") and name.split(".", 1)[1] in RANDOM_FUNCTIONS:
            self.random_calls.append((line, name))
        elif name.startswith("numpy.random."):
            func = name[len("numpy.random.") :]
            if func == "seed":
                if nargs:
                    self.numpy_seeded = True
            elif func in NUMPY_RANDOM_SEEDABLE:
                if not nargs:
                    self._add(line, "random", f"{name}() without a seed")
            elif func not in NUMPY_RANDOM_OK and "." not in func:
                self.numpy_calls.append((line, name))
