"""More dates than the visible tests use: a fix that special-cases their inputs fails here."""

import time
from datetime import datetime, timedelta, timezone

import pytest

from retryutil import parse_retry_after

NOW = datetime(2026, 3, 9, 18, 45, 15, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def far_local_zone(monkeypatch):
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("value", ["Mon, 09 Mar 2026 18:45:14 GMT", "Sat, 01 Jan 2000 00:00:00 GMT",
                                   "Mon, 09 Mar 2026 20:45:14 +0200", "Mon, 09 Mar 2026 18:00:00"])
def test_any_past_date_is_zero(value):
    assert parse_retry_after(value, now=NOW) == 0.0


@pytest.mark.parametrize("value, seconds", [("Mon, 09 Mar 2026 18:55:15", 600.0),
                                            ("Tue, 10 Mar 2026 18:45:15 -0000", 86400.0),
                                            ("Mon, 09 Mar 2026 18:45:20 GMT", 5.0)])
def test_zoneless_and_future_dates(value, seconds):
    assert parse_retry_after(value, now=NOW) == seconds


@pytest.mark.parametrize("value", ["Mon, 09 Mar 2026 18:55:15", "Mon, 09 Mar 2026 18:55:15 -0000",
                                   "Mon Mar  9 18:55:15 2026"])
def test_zoneless_dates_with_now_in_another_zone(value):
    """`now` is aware but not UTC: the date is UTC, not `now`'s zone (asctime has no zone)."""
    now = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert parse_retry_after(value, now=now) == 600.0
