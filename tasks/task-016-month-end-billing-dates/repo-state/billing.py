"""Subscription billing dates."""

from datetime import date


def add_months(day: date, months: int) -> date:
    """The same day of the month, `months` months later (earlier if negative)."""
    index = day.month - 1 + months
    return day.replace(year=day.year + index // 12, month=index % 12 + 1)


def billing_schedule(anchor: date, count: int) -> list[date]:
    """The first `count` billing dates of a monthly subscription that started on `anchor`."""
    dates = [anchor]
    while len(dates) < count:
        dates.append(add_months(dates[-1], 1))
    return dates
