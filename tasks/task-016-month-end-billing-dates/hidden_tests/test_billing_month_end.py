import calendar
from datetime import date, timedelta

from billing import add_months, billing_schedule


def test_add_months_clamps_to_month_end():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2025, 1, 31), 1) == date(2025, 2, 28)
    assert add_months(date(2024, 1, 30), 1) == date(2024, 2, 29)
    assert add_months(date(2024, 3, 31), 1) == date(2024, 4, 30)
    assert add_months(date(2024, 8, 31), 1) == date(2024, 9, 30)
    assert add_months(date(2024, 12, 31), 2) == date(2025, 2, 28)
    assert add_months(date(2023, 12, 31), 14) == date(2025, 2, 28)


def test_add_months_negative():
    assert add_months(date(2024, 3, 31), -1) == date(2024, 2, 29)
    assert add_months(date(2024, 1, 31), -2) == date(2023, 11, 30)
    assert add_months(date(2024, 5, 15), -17) == date(2022, 12, 15)


def test_add_months_exhaustive():
    day = date(2023, 1, 1)
    while day < date(2025, 1, 1):
        for months in range(-14, 15):
            got = add_months(day, months)
            index = day.month - 1 + months
            year, month = day.year + index // 12, index % 12 + 1
            last = calendar.monthrange(year, month)[1]
            assert got == date(year, month, min(day.day, last)), (day, months)
        day += timedelta(days=1)


def test_schedule_keeps_anchor_day():
    assert billing_schedule(date(2024, 1, 31), 6) == [
        date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31),
        date(2024, 4, 30), date(2024, 5, 31), date(2024, 6, 30),
    ]
    assert billing_schedule(date(2023, 11, 30), 4) == [
        date(2023, 11, 30), date(2023, 12, 30), date(2024, 1, 30), date(2024, 2, 29)
    ]
    assert billing_schedule(date(2024, 2, 29), 13)[-1] == date(2025, 2, 28)
    assert billing_schedule(date(2024, 5, 31), 1) == [date(2024, 5, 31)]
    assert billing_schedule(date(2024, 5, 31), 0) == []
