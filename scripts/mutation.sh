#!/usr/bin/env bash
# Mutation testing of the pure decision code (verdict/, results' stats and summary, grading/)
# with mutmut, in a throwaway copy of the checkout. Slow (tens of minutes on 2 cores): run by
# hand, not in CI. Prints killed / survived / other per package and writes each survivor's diff
# to build/mutation-survivors.txt; docs/architecture.md has the last figures and what survives.
#
#   scripts/mutation.sh            # all of the scope
#   scripts/mutation.sh "ci_eval.verdict.gate*"   # only these mutants (mutmut run ARGS)
#   MUTATION_SCOPE="ci_eval/results/summary.py" \
#     MUTATION_TESTS="tests/test_gc.py tests/test_x.py::test_y" scripts/mutation.sh --max-children 1
#                                  # a smaller scope / test selection (space-separated, from the root)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ci-eval-mutation-XXXXXX")"
trap 'rm -rf "$work"' EXIT
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 cp --parents -t "$work")
cd "$work"
python3 -m venv .venv
. .venv/bin/activate
pip install --quiet --disable-pip-version-check -e '.[test]' 'mutmut>=3.8,<4'
# every interpreter of this venv imports mutation_child_hits: in mutmut's stats pass it records what
# a test's `python -m ci_eval` children run, and mutation_stats_plugin (-p below) credits the test
printf '%s\n' "$work/scripts/mutation_stats" "import mutation_child_hits" \
  > "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ci_eval_mutation_stats.pth"
python3 - <<'PY'
import os
from pathlib import Path
# the tests of the scoped packages (in-process ones kill most mutants; CLI children run them too)
tests = sorted({p.stem for pattern in ("test_gate.py", "test_confirmation.py", "test_calibration*.py",
                                       "test_baseline.py", "test_stats_and_results.py",
                                       "test_render_compare.py", "test_gc.py", "test_history.py",
                                       "test_grading_*.py", "test_stream.py",
                                       # verdict/ reached only through the CLI: gate --plan and
                                       # plan (planned_shards), history site (archive), axes
                                       "test_report_plan.py", "test_history_site.py",
                                       "test_cost_gate.py")
                for p in Path("tests").glob(pattern)})
scope = ["ci_eval/verdict/*", "ci_eval/results/stats.py", "ci_eval/results/summary.py"]
if Path("ci_eval/grading").is_dir():
    scope.append("ci_eval/grading/*")
scope = os.environ.get("MUTATION_SCOPE", "").split() or scope
selection = os.environ.get("MUTATION_TESTS", "").split() or [f"tests/{t}.py" for t in tests]
with open("pyproject.toml", "a") as handle:
    handle.write("\n[tool.mutmut]\nsource_paths = [\"ci_eval\"]\n"
                 f"only_mutate = {scope!r}\n".replace("'", '"')
                 + f"pytest_add_cli_args_test_selection = {selection!r}\n"
                 .replace("'", '"')
                 + 'pytest_add_cli_args = ["-q", "-p", "no:cacheprovider", "-p", "mutation_stats_plugin"]\n'
                 # what the selected tests read besides ci_eval/ (gate_sim.py, the bundled tasks,
                 # scripts/demo_history.py)
                 + 'also_copy = ["bench", "tasks", "docs", "scripts"]\n')
PY
if ! mutmut run "$@"; then
  echo "mutmut run failed (see above): no figures" >&2
  exit 1
fi
mutmut results --all true > results.txt
python3 - <<'PY'
import collections, re, subprocess
counts = collections.defaultdict(collections.Counter)
survivors = []
for line in open("results.txt"):
    m = re.match(r"\s*(ci_eval\.[\w.]+?)\.x.*?: ([\w ]+)$", line)
    if not m:
        continue
    module, status = m.groups()
    package = ".".join(module.split(".")[:2]) if "verdict" in module or "grading" in module else module
    counts[package][status] += 1
    if status == "survived":
        survivors.append(line.split(":")[0].strip())
for package, c in sorted(counts.items()):
    # "not checked": left out by mutant names given to mutmut run
    columns = ("killed", "survived", "no tests", "timeout", "not checked")
    print(f"{package:32} " + "  ".join(f"{name} {c[name]:4}" for name in columns)
          + f"  other {sum(c.values()) - sum(c[name] for name in columns):4}")
print("\nsurvived:")
print("\n".join(survivors) or "(none)")
with open("survivors.txt", "w") as report:
    for name in survivors:
        shown = subprocess.run(["mutmut", "show", name], capture_output=True, text=True)
        report.write(f"## {name}\n{shown.stdout}\n")
PY
mkdir -p "$repo/build"
cp survivors.txt "$repo/build/mutation-survivors.txt"
echo "each survivor's diff: $repo/build/mutation-survivors.txt" >&2
