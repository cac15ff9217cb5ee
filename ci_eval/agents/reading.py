"""Reading tool output that may be hostile: JSON found in mixed stdout+stderr text (with the
limits of ci_eval.strict_json), and the infrastructure-error signatures of provider APIs.

    objects, note = json_lines(output)            # one JSON object per line (JSONL tools)
    obj, problem = last_json_object(output, accept=lambda o: "stats" in o)  # pretty-printed JSON
    infra = classify("API Error: 529 overloaded_error")   # InfraError("overloaded", ...) or None

`classify` is only ever given a tool's own error text (an error flag, an error event, an
exception name), never model text, so a model cannot talk its run out of being scored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from ci_eval import strict_json
from ci_eval.agents.preset import InfraError, make_infra, one_line

MAX_CANDIDATES = 50  # JSON starts tried by last_json_object, from the end


def json_lines(text: str) -> tuple[list[dict], str]:
    """Every line of text that is a JSON object, in order; and a note ("" if none) on the lines
    that start like one but do not parse (truncated, too deep, an integer of 5000 digits, ...)."""
    objects: list[dict] = []
    bad, first = 0, ""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        problem = "truncated" if not line.endswith("}") else ""
        if not problem:
            try:
                value = strict_json.loads_limited(line)
            except ValueError as exc:
                problem = one_line(exc, 120)
            else:
                if isinstance(value, dict):
                    objects.append(value)
                continue
        bad += 1
        first = first or problem
    return objects, f"{bad} unreadable JSON line(s), the first: {first}" if bad else ""


def last_json_object(text: str, accept: Callable[[dict], bool]) -> tuple[dict | None, str]:
    """The last JSON object in text that starts in the first column of a line (it may span
    lines: a pretty-printed object's inner braces are indented) and satisfies accept; (None,
    why) when there is none. At most MAX_CANDIDATES starts are tried, from the end."""
    starts = [m.start() for m in re.finditer(r"(?m)^\{", text)]
    problem = "no JSON object in the output"
    for start in reversed(starts[-MAX_CANDIDATES:]):
        try:
            value, _end = strict_json.decode_at(text, start)
        except ValueError as exc:
            if problem == "no JSON object in the output":
                problem = f"the last JSON object is not readable ({one_line(exc, 120)})"
            continue
        if isinstance(value, dict) and accept(value):
            return value, ""
        if problem == "no JSON object in the output":
            problem = "no JSON object of the expected shape in the output"
    return None, problem


def compact(value: object) -> str:
    """A JSON value as one short line (for error texts that are objects)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


# --- infrastructure signatures ------------------------------------------------------------------

_ALTERNATIVES = {
    # A model name the provider does not know: ci-eval.yaml or the tool's settings are wrong,
    # and no retry will mend it (a misspelled model is no 0% regression).
    "setup": ("model not found", (
        r"model_not_found", r"not_found_error", r"notfounderror",
        r"\bmodel\b[^\n]{0,120}\b(?:does not exist|not found|is not found|not supported)", r"\b404\b[^\n]{0,40}not found",
        r"unexpected status 404", r"\bmodels/\S+ is not found")),
    "auth": ("authentication failed", (
        r"invalid[ _-]?(?:x-)?api[ _-]?key", r"incorrect api key", r"api key (?:not valid|is invalid)",
        r"missing api key", r"no api key", r"api key not (?:found|set)", r"invalid_api_key",
        r"please run /login", r"run /login", r"not logged in", r"could not resolve authentication",
        r"authentication[ _]?(?:error|failed)", r"authenticationerror", r"not able to authenticate",
        r"\b401\b", r"unauthori[sz]ed", r"permission_denied", r"permissiondeniederror",
        r"\b403\b", r"forbidden", r"missing these environment variables",
        r"credit balance is too low", r"billing")),
    "rate_limit": ("rate limit or quota", (
        r"\b429\b", r"rate[ _-]?limit", r"ratelimit", r"too many requests", r"quota",
        r"insufficient_quota", r"resource[ _]exhausted", r"usage limit", r"hit your limit",
        r"exhausted your capacity")),
    "overloaded": ("provider overloaded", (
        r"\b529\b", r"overloaded", r"\b503\b", r"service[ _]?unavailable", r"servers are down",
        r"internal[ _]?server[ _]?error", r"\b500\b", r"\b502\b", r"bad gateway",
        r"server error", r"experiencing high demand")),
    "network": ("network unreachable", (
        r"ECONNREFUSED", r"ECONNRESET", r"ENOTFOUND", r"EAI_AGAIN", r"ETIMEDOUT", r"ENETUNREACH",
        r"EHOSTUNREACH", r"getaddrinfo", r"network is unreachable", r"no route to host",
        r"connection (?:refused|reset|error)", r"connecterror", r"apiconnectionerror",
        r"could not resolve host", r"name resolution", r"failed to resolve", r"dns error",
        r"error sending request", r"stream disconnected", r"unable to connect", r"fetch failed",
        r"failed to connect", r"timed out", r"timeout", r"other side closed", r"UND_ERR_SOCKET",
        r"socketerror", r"server disconnected", r"connection (?:closed|aborted|lost)",
        r"remoteprotocolerror", r"incomplete chunked read", r"peer closed connection")),
}
# In this order: the first kind that matches wins.
_SIGNATURES = tuple((kind, label, re.compile("|".join(patterns), re.IGNORECASE))
                    for kind, (label, patterns) in _ALTERNATIVES.items())


def classify(text: str | None) -> InfraError | None:
    """The infrastructure failure a tool's own error text describes, or None. The first kind
    that matches wins, in the order setup (model not found), auth, rate_limit, overloaded,
    network."""
    if not text:
        return None
    for kind, label, pattern in _SIGNATURES:
        match = pattern.search(text)
        if match:
            return make_infra(kind, f"{label}: {_line_of(text, match.start())}")
    return None


def status_infra(status: int | None, detail: str) -> InfraError | None:
    """The kind an HTTP status of the model API names, if it names one: 404 the model does not
    exist (setup: never retried), 401/403 auth, 429 rate_limit, 5xx overloaded."""
    if status == 404:
        return make_infra("setup", f"model not found (HTTP 404): {detail}")
    if status in (401, 403):
        return make_infra("auth", f"authentication failed (HTTP {status}): {detail}")
    if status == 429:
        return make_infra("rate_limit", f"rate limit or quota (HTTP 429): {detail}")
    if status is not None and status >= 500:
        return make_infra("overloaded", f"provider error (HTTP {status}): {detail}")
    return None


def classify_as(kind: str, text: str | None) -> InfraError | None:
    """classify() for one kind only: whether text carries that kind's signature."""
    for name, label, pattern in _SIGNATURES:
        if name == kind and text and (match := pattern.search(text)):
            return make_infra(kind, f"{label}: {_line_of(text, match.start())}")
    return None


def classify_first(texts: Iterable[str | None]) -> InfraError | None:
    for text in texts:
        found = classify(text)
        if found:
            return found
    return None


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return one_line(text[start:] if end < 0 else text[start:end])
