"""Retry-After handling for the HTTP client (RFC 9110 section 10.2.3)."""

from datetime import datetime
from email.utils import parsedate_to_datetime


def retry_after_seconds(value: str, now: datetime) -> float:
    """Seconds to wait before retrying, from a Retry-After header value.

    `value` is either delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT").
    `now` is the current time as an aware UTC datetime (injected so callers and tests control it).
    """
    value = value.strip()
    if value.isdigit():
        return float(value)
    when = parsedate_to_datetime(value)
    return (when - now).total_seconds()
