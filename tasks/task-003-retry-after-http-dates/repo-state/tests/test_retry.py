from datetime import datetime, timezone

from retry import retry_after_seconds

NOW = datetime(2026, 10, 21, 7, 0, 0, tzinfo=timezone.utc)


def test_delay_seconds():
    assert retry_after_seconds("120", NOW) == 120


def test_http_date_in_the_future():
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 GMT", NOW) == 28 * 60
