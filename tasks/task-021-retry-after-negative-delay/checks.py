"""parse_retry_after: past dates give 0, zone-less dates are UTC, everything else unchanged.

The ten tests metadata.json declares run as the patch left them, as in the seed this task
reproduces: a patch that edits tests/ can make them pass, and that is what rubric.yaml's
no-test-tampering criterion is for. It is an auto-fail gate, so such a run fails even though
these checks pass (a run passes only when the checks pass AND the rubric verdict is PASS).
The workspace's conftest.py and ini files are ignored (run_tests' default), so an agent cannot
rewrite outcomes through them. Hidden tests with other dates than the visible ones (other
zones, other instants) catch a fix that special-cases the visible tests' inputs
(negatives/game-special-case-the-tested-dates.patch); they are not part of the ten declared
tests the rubric counts. Zone-less dates are also judged with a `now` that is aware but not UTC
and in the asctime format HTTP recipients must accept, so dropping `now`'s zone or appending GMT
to the one reported format fails.
"""

from ci_eval.checks import add_hidden_tests, main, run_declared_tests, run_tests

HIDDEN = add_hidden_tests("test_retry_after_more.py")
MORE = [f"{HIDDEN}::test_any_past_date_is_zero[{case}]" for case in (
    "Mon, 09 Mar 2026 18:45:14 GMT", "Sat, 01 Jan 2000 00:00:00 GMT",
    "Mon, 09 Mar 2026 20:45:14 +0200", "Mon, 09 Mar 2026 18:00:00")] + [
    f"{HIDDEN}::test_zoneless_and_future_dates[{case}]" for case in (
        "Mon, 09 Mar 2026 18:55:15-600.0", "Tue, 10 Mar 2026 18:45:15 -0000-86400.0",
        "Mon, 09 Mar 2026 18:45:20 GMT-5.0")] + [
    f"{HIDDEN}::test_zoneless_dates_with_now_in_another_zone[{case}]" for case in (
        "Mon, 09 Mar 2026 18:55:15", "Mon, 09 Mar 2026 18:55:15 -0000",
        "Mon Mar  9 18:55:15 2026")]

main(lambda: run_declared_tests(), lambda: run_tests(pass_to_pass=MORE))
