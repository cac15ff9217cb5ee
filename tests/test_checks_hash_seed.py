"""Each checks run, checks.py's process and its pytest session alike, is a fresh interpreter
with a string-hash seed of its own: the k runs of a task are independent draws of checks that
depend on the order of a set of strings, and `verify`'s "same state twice" can catch them. A
process kept warm and forked for each run (the sandbox launcher did that for checks.py; a warm
pytest would save pytest's import) shares one seed across an invocation: this test fails then."""

from __future__ import annotations

import json
import re

from harness_helpers import cli, write_task

BITS = 24
# bit i of hash("ci-eval") in the checks' pytest session, one test each: the session's outcomes
# spell that hash's low bits, which checks.py reports in its reason
TEST = ('import pytest\n\n'
        f'@pytest.mark.parametrize("bit", range({BITS}))\n'
        'def test_bit(bit):\n'
        '    assert hash("ci-eval") >> bit & 1\n')
CHECKS = ('from ci_eval.checks import failed, main, run_pytest\n\n'
          'def probe():\n'
          '    run = run_pytest(["tests/test_seed.py"])\n'
          '    bits = [run.outcomes[f"tests/test_seed.py::test_bit[{i}]"] == "PASSED"\n'
          f'            for i in range({BITS})]\n'
          '    return failed("seed-probe " + "".join("1" if b else "0" for b in bits)\n'
          '                  + " checks-seed %d" % hash("ci-eval"))\n\n'
          'main(probe)\n')


def test_every_checks_session_of_one_invocation_has_its_own_hash_seed(tmp_path):
    root = tmp_path / "repo"
    write_task(root, "task-001-seed", checks=CHECKS, files={"tests/test_seed.py": TEST},
               solution="true\n")
    done = cli("run", "--agent", "noop", "-k", "3", "-j", "1", "--out", str(tmp_path / "out"),
               cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in
               (tmp_path / "out" / "task-001-seed.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["status"] == "fail" for r in records), records
    seeds = [re.search(r"seed-probe ([01]+)", r["reason"]) for r in records]
    assert all(seeds), [r["reason"] for r in records]
    assert len({s.group(1) for s in seeds}) == 3, [s.group(1) for s in seeds]
    # checks.py's own process too: each a fresh interpreter, never a fork sharing one seed
    own = [re.search(r"checks-seed (-?\d+)", r["reason"]).group(1) for r in records]
    assert len(set(own)) == 3, own
