from datetime import date

from billing import add_months, billing_schedule


def test_add_months_simple():
    assert add_months(date(2024, 1, 15), 1) == date(2024, 2, 15)
    assert add_months(date(2024, 11, 15), 3) == date(2025, 2, 15)


def test_schedule_mid_month():
    assert billing_schedule(date(2024, 1, 10), 3) == [
        date(2024, 1, 10), date(2024, 2, 10), date(2024, 3, 10)
    ]


def test_schedule_month_end():
    assert billing_schedule(date(2024, 1, 31), 4) == [
        date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31), date(2024, 4, 30)
    ]
