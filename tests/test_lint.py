"""Static lint of checks.py: each rule, alias resolution, allow markers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ci_eval.tasks.lint import RULES, Finding, lint_checks, lint_source


def rules(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_source(textwrap.dedent(source))]


@pytest.mark.parametrize(
    "source",
    [
        "import openai",
        "import anthropic as a",
        "from anthropic import Anthropic",
        "import google.generativeai as genai",
        "from google import genai",
        "from google.genai import types",
        "import cohere",
        "import mistralai.client",
        "import litellm",
        "import langchain",
        "from langchain_openai import ChatOpenAI",
        "import langchain_core.messages",
        "import groq",
        "from transformers import pipeline",
        "x = __import__('openai')",
        "import importlib\nm = importlib.import_module('anthropic')",
        "def f():\n    import openai\n    return openai",
    ],
)
def test_llm_sdk(source):
    assert {rule for _, rule in rules(source)} == {"llm-sdk"}


@pytest.mark.parametrize(
    "source",
    [
        "import socket",
        "import requests",
        "from requests import get",
        "import httpx",
        "import urllib.request",
        "from urllib import request",
        "from urllib.request import urlopen",
        "import http.client",
        "from http import client",
        "import aiohttp",
        "import urllib3",
        "import ftplib",
        "import smtplib",
        "import xmlrpc.client",
        "import boto3",
    ],
)
def test_network(source):
    assert {rule for _, rule in rules(source)} == {"network"}


@pytest.mark.parametrize(
    "source",
    [
        "import urllib.parse",
        "from urllib.parse import urlparse",
        "from urllib import parse",
        "import http",
        "from http import HTTPStatus",
        "import json, re, subprocess, pathlib",
        "from ci_eval.checks import file_equals, regex_match, run_tests, main\nmain()",
        "from . import helpers",
        "from .openai import x",
        "import time\nt0 = time.monotonic(); t1 = time.perf_counter()",
        "import time\ntime.sleep(0.1)",
        "import time\ntime.localtime(0); time.gmtime(12); time.ctime(0)",
        "import time\ntime.strftime('%Y', time.gmtime(0))",
        "import datetime\ndatetime.date(2024, 1, 1); datetime.datetime.fromisoformat('2024-01-01')",
        "import random\nrandom.seed(1234)\nrandom.shuffle([1, 2])",
        "import random\nrng = random.Random(7)\nrng.choice([1, 2])",
        "from random import Random\nRandom(1).random()",
        "import numpy as np\nrng = np.random.default_rng(0)\nrng.random()",
        "import numpy as np\nnp.random.seed(3)\nnp.random.rand(2)",
        "def now():\n    return 1\nnow()",
        "class datetime:\n    pass",
    ],
)
def test_clean(source):
    assert rules(source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import random\nrandom.choice([1])", [(2, "random")]),
        ("import random\nrandom.random()\nrandom.seed()", [(2, "random")]),
        ("from random import shuffle as mix\nmix([1, 2])", [(2, "random")]),
        ("import random as r\nx = r.randint(1, 6)", [(2, "random")]),
        ("import random\nrng = random.Random()", [(2, "random")]),
        ("import random\nrandom.SystemRandom().random()", [(2, "random")]),
        ("import secrets", [(1, "random")]),
        ("import os\nos.urandom(8)", [(2, "random")]),
        ("import uuid\nuuid.uuid4()", [(2, "random")]),
        ("import numpy as np\nnp.random.rand(3)", [(2, "random")]),
        ("import numpy\nnumpy.random.default_rng()", [(2, "random")]),
    ],
)
def test_random(source, expected):
    assert rules(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import datetime\ndatetime.datetime.now()",
        "import datetime\ndatetime.datetime.utcnow()",
        "import datetime\ndatetime.datetime.today()",
        "import datetime\ndatetime.date.today()",
        "from datetime import datetime\ndatetime.now(tz=None)",
        "from datetime import datetime as dt\ndt.now()",
        "from datetime import date\ndate.today()",
        "import time\ntime.time()",
        "import time\ntime.time_ns()",
        "from time import time\ntime()",
        "import time\ntime.localtime()",
        "import time\ntime.gmtime()",
        "import time\ntime.ctime()",
        "import time\ntime.asctime()",
        "import time\ntime.strftime('%Y-%m-%d')",
        "import time as t\nt.strftime(fmt)",
    ],
)
def test_wall_clock(source):
    assert rules(source) == [(2, "wall-clock")]


def test_finding_format_and_order(tmp_path):
    path = tmp_path / "checks.py"
    path.write_text("import time\nimport socket\nprint(time.time())\nimport openai\n")
    findings = lint_checks(path)
    assert [(f.line, f.rule) for f in findings] == [
        (2, "network"),
        (3, "wall-clock"),
        (4, "llm-sdk"),
    ]
    assert (
        str(findings[0]) == f"{path}:2: imports 'socket': checks must not use the network [network]"
    )
    assert isinstance(findings[0], Finding)


def test_allow_marker_all_rules():
    assert rules("import socket  # ci-eval: allow\nimport requests\n") == [(2, "network")]


def test_allow_marker_named_rules():
    source = """\
    import time
    a = time.time()  # ci-eval: allow[wall-clock]
    b = time.time()  # ci-eval: allow[network]
    import socket, time as t2  # ci-eval: allow[wall-clock, network]
    c = t2.time()  #ci-eval:allow[random,wall-clock] -- used only in a log line
    """
    assert rules(source) == [(3, "wall-clock")]


def test_allow_marker_unknown_rule_is_reported():
    assert rules("import socket  # ci-eval: allow[sockets]\n") == [(1, "marker"), (1, "network")]


def test_marker_in_string_is_not_a_marker():
    assert rules('import socket; x = "# ci-eval: allow"\n') == [(1, "network")]


def test_allow_marker_applies_to_reported_line_only():
    source = (
        "import random\nrandom.choice(  # ci-eval: allow[random]\n    [1, 2])\nrandom.random()\n"
    )
    assert rules(source) == [(4, "random")]


def test_syntax_error_is_a_finding(tmp_path):
    path = tmp_path / "checks.py"
    path.write_text("def broken(:\n")
    (finding,) = lint_checks(path)
    assert (finding.rule, finding.line) == ("syntax", 1)
    assert "does not parse" in finding.message


def test_unreadable_file_is_a_finding(tmp_path):
    (finding,) = lint_checks(tmp_path / "missing.py")
    assert finding.rule == "syntax"


RULE_EXAMPLES = {
    "llm-sdk": "import openai",
    "network": "import socket",
    "random": "import random\nrandom.random()",
    "wall-clock": "import time\ntime.time()",
    "verdict": "from ci_eval.checks import passed",
    "junit-ids": "import sys\nfrom ci_eval.checks import run_junit_tests\n"
                 "sys.exit(run_junit_tests(['npx', 'jest'], ['a > b']))",
    "syntax": "def (",
    "marker": "x = 1  # ci-eval: allow[no-such-rule]",
}


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_fires_and_is_documented_for_task_authors(rule):
    assert {f.rule for f in lint_source(RULE_EXAMPLES[rule])} == {rule}
    if rule not in ("syntax", "marker"):
        line, *rest = RULE_EXAMPLES[rule].splitlines()[::-1]
        allowed = "\n".join([*rest[::-1], f"{line}  # ci-eval: allow[{rule}]"])
        assert lint_source(allowed) == []
    guide = (Path(__file__).resolve().parents[1] / "docs" / "checks-lint.md").read_text()
    assert f"`{rule}`" in guide


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ci_eval.checks import main, passed\npassed()", [(1, "verdict")]),
        ("import os\nfrom ci_eval.checks import main\ndef run():\n    main()", [(2, "verdict")]),
        ("from ci_eval.checks import main\nclass C:\n    main()", [(1, "verdict")]),
        ("from ci_eval.checks import main  # ci-eval: allow[verdict]\n", []),
        ("print('no helpers: the run says so')", []),
        ("from ci_eval.checks import main\ndef a():\n    b()\ndef b():\n    main()\na()", []),
        ("from ci_eval.checks import passed\nraise SystemExit(0 if passed() else 1)", []),
        ("from ci_eval.checks import passed\nimport sys as s\ns.exit(0)", []),
        ("from ci_eval.checks import passed\nif passed():\n    exit(0)", []),
    ],
)
def test_verdict(source, expected):
    assert rules(source) == expected
