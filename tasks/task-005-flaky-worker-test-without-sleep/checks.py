"""The worker test must pass when the worker is slow (sleeps do not wait) and fail when the worker
loses a job or reorders jobs (the prompt promises both).

One pytest run: plugins/ci_eval_worker_probe.py replaces the test by four probe items, one per
worker (see its docstring); each must PASS. The slow workers also make the test's clocks jump, so
polling until a deadline counts as depending on timing. A @catches-* item passes only when the agent's test
fails against the broken worker.
"""

import os

from ci_eval.checks import failed, main, passed, run_tests, task_dir

os.environ["PYTHONPATH"] = str(task_dir() / "plugins")
TEST = "tests/test_worker.py::test_processes_submitted_jobs"
PROBES = {
    "slow-worker": "with a slow worker (50 ms per job; time.sleep does not wait) the test must "
                   "pass, or it still depends on timing",
    "catches-lost-jobs": "with a worker that loses a job (a, b, c handled as a, a, b) the test "
                         "must fail",
    "catches-reordered-jobs": "with a worker that reorders jobs (a, b, c handled as b, a, c) the "
                              "test must fail",
    "catches-lost-jobs-when-slow": "with a slow worker that loses a job the test must fail (one "
                                   "that asserts before the worker is done and accepts partial "
                                   "results passes with any worker)",
}


def check_probes():
    result = run_tests(pass_to_pass=[f"{TEST}@{probe}" for probe in PROBES],
                       args=["-p", "ci_eval_worker_probe"], timeout=60)
    if result.ok:
        return passed("synchronised test that catches lost and reordered jobs")
    broken = [text for probe, text in PROBES.items() if f"@{probe}" in result.reason]
    return failed("; ".join(broken or ["the probed test did not run"]) + f" ({result.reason})")


main(check_probes)
