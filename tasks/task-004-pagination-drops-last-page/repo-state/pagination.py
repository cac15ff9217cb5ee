"""Page-based access to a sequence (pages are numbered from 1)."""

from typing import Iterator, Sequence, TypeVar

T = TypeVar("T")


def page_count(total: int, per_page: int) -> int:
    """Number of pages needed to show `total` items, `per_page` at a time."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    return total // per_page


def get_page(items: Sequence[T], page: int, per_page: int) -> Sequence[T]:
    """Items on page `page` (1-based)."""
    start = (page - 1) * per_page
    return items[start : start + per_page]


def iter_pages(items: Sequence[T], per_page: int) -> Iterator[Sequence[T]]:
    for page in range(1, page_count(len(items), per_page) + 1):
        yield get_page(items, page, per_page)
