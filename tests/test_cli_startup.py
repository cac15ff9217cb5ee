"""Every `ci-eval` start builds the whole parser (ci_eval/main.py imports each command module for
its add_parser), so what a command module imports at its top is paid by every command, `--help`
and each CLI child of this suite included. The stages load inside a command's run(): building the
parser imports none of them (gate's --comment choices come from github/comment_policy.py, not from
github/comment.py and the REST client behind it, which cost every start about 0.07 CPU s)."""

from __future__ import annotations

import subprocess
import sys

STAGES = ("ci_eval.run", "ci_eval.render", "ci_eval.verdict", "ci_eval.results", "ci_eval.grading",
          "ci_eval.importers", "ci_eval.github.client", "ci_eval.github.comment")
LOADED = ("import sys\nfrom ci_eval.main import build_parser\nbuild_parser()\n"
          "print('\\n'.join(sorted(sys.modules)))\n")


def test_building_the_parser_imports_no_stage():
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True,
                          check=True, timeout=60)
    modules = done.stdout.split()
    assert "ci_eval.commands.gate" in modules  # every command's parser was built
    stages = [m for m in modules if any(m == s or m.startswith(s + ".") for s in STAGES)]
    assert stages == [], f"imported at the top of a command module (move into its run()): {stages}"
