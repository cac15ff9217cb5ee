import os
import time
from datetime import datetime, timedelta, timezone

import pytest
from retry import retry_after_seconds

NOW = datetime(2026, 10, 21, 7, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "value",
    ["Wed, 21 Oct 2026 06:59:59 GMT", "Tue, 20 Oct 2026 07:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT"],
    ids=["one-second-ago", "one-day-ago", "1994"],
)
def test_past_date_means_retry_now(value):
    assert retry_after_seconds(value, NOW) == 0


def test_date_equal_to_now_is_zero():
    assert retry_after_seconds("Wed, 21 Oct 2026 07:00:00 GMT", NOW) == 0


@pytest.mark.parametrize(
    "value",
    ["Wed, 21 Oct 2026 07:28:00", "Wed, 21 Oct 2026 07:28:00 -0000"],
    ids=["no-zone", "minus-0000"],
)
def test_date_without_zone_is_utc(value):
    assert retry_after_seconds(value, NOW) == 28 * 60


@pytest.mark.parametrize(
    "value",
    ["Wed Oct 21 07:28:00 2026", "Wednesday, 21-Oct-26 07:28:00 GMT"],
    ids=["asctime", "rfc850"],
)
def test_obsolete_http_date_formats(value):
    """RFC 9110 5.6.7: recipients accept the two obsolete formats too; asctime has no zone."""
    assert retry_after_seconds(value, NOW) == 28 * 60


def test_past_date_without_zone_is_zero():
    assert retry_after_seconds("Wed, 21 Oct 2026 06:00:00", NOW) == 0


def test_other_zone_is_converted():
    assert retry_after_seconds("Wed, 21 Oct 2026 09:28:00 +0200", NOW) == 28 * 60


def test_now_in_another_zone():
    now = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert retry_after_seconds("Wed, 21 Oct 2026 07:01:30 GMT", now) == 90


def test_delay_seconds_still_work():
    assert retry_after_seconds(" 0 ", NOW) == 0
    assert retry_after_seconds("3600", NOW) == 3600


def test_zoneless_date_with_now_in_another_zone():
    now = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00", now) == 28 * 60
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 -0000", now) == 28 * 60


# POSIX TZ strings need no zoneinfo files: the verdict must not depend on the host's zone.
LOCAL_ZONES = {"UTC": "UTC0", "Kolkata": "IST-5:30", "New_York": "EST5EDT,M3.2.0,M11.1.0",
               "Auckland": "NZST-12NZDT,M9.5.0,M4.1.0/3"}


@pytest.fixture
def local_zone(request):
    saved = os.environ.get("TZ")
    os.environ["TZ"] = LOCAL_ZONES[request.param]
    time.tzset()
    assert time.timezone == {"UTC": 0, "Kolkata": -19800, "New_York": 18000,
                             "Auckland": -43200}[request.param], "TZ was not applied"
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.parametrize("local_zone", list(LOCAL_ZONES), indirect=True)
def test_host_time_zone_does_not_matter(local_zone):
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00", NOW) == 28 * 60
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 -0000", NOW) == 28 * 60
    assert retry_after_seconds("Wed, 21 Oct 2026 06:00:00", NOW) == 0
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 GMT", NOW) == 28 * 60
    assert retry_after_seconds("Wed, 21 Oct 2026 03:29:00 -0400", NOW) == 29 * 60
