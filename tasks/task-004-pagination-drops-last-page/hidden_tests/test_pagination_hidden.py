import pytest
from export import export_orders
from pagination import get_page, iter_pages, page_count


@pytest.mark.parametrize("per_page", [1, 2, 3, 4, 7, 10, 25])
def test_every_item_exactly_once_in_order(per_page):
    for total in range(60):
        items = list(range(total))
        flat = [x for page in iter_pages(items, per_page) for x in page]
        assert flat == items, (total, per_page)


@pytest.mark.parametrize(
    "total,per_page,expected",
    [(0, 10, 0), (1, 10, 1), (10, 10, 1), (11, 10, 2), (101, 25, 5), (100, 25, 4), (3, 1, 3)],
)
def test_page_count(total, per_page, expected):
    assert page_count(total, per_page) == expected


def test_no_empty_trailing_page():
    pages = list(iter_pages(list(range(20)), 5))
    assert len(pages) == 4
    assert all(len(p) == 5 for p in pages)


def test_get_page_last_partial():
    assert list(get_page(list(range(1, 102)), 5, 25)) == [101]


def test_export_101_orders():
    orders = [{"id": i, "customer": "x", "total": "1.00"} for i in range(1, 102)]
    rows = export_orders(orders).splitlines()[1:]
    assert [int(r.split(",")[0]) for r in rows] == list(range(1, 102))
