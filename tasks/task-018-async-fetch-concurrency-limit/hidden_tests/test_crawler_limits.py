import asyncio

import pytest
from crawler import fetch_all


class Recorder:
    """A fake fetch: tracks requests in flight; takes a URL-dependent number of loop turns."""

    def __init__(self, fail=()):
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = []
        self.fail = set(fail)

    async def __call__(self, url):
        self.started.append(url)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            n = int(url.rsplit("/", 1)[1])
            for _ in range((n * 7) % 5 + 1):  # completion order differs from input order
                await asyncio.sleep(0)
            if url in self.fail:
                raise ValueError(f"boom {url}")
            return f"body {n}".encode()
        finally:
            self.in_flight -= 1


def urls(n):
    return [f"https://api.example.org/item/{i}" for i in range(n)]


@pytest.mark.parametrize("limit", [1, 3, 5])
def test_limit_is_respected_and_used(limit):
    fetch = Recorder()
    result = asyncio.run(fetch_all(urls(40), fetch, limit=limit))
    assert fetch.max_in_flight == limit
    assert result == [f"body {i}".encode() for i in range(40)]
    assert sorted(fetch.started) == sorted(urls(40))


def test_default_limit_is_five():
    fetch = Recorder()
    asyncio.run(fetch_all(urls(23), fetch))
    assert fetch.max_in_flight == 5


def test_failures_land_in_their_slot():
    bad = {urls(12)[3], urls(12)[10]}
    fetch = Recorder(fail=bad)
    result = asyncio.run(fetch_all(urls(12), fetch, limit=4))
    assert len(result) == 12
    for i, item in enumerate(result):
        if urls(12)[i] in bad:
            assert isinstance(item, ValueError) and str(item) == f"boom {urls(12)[i]}"
        else:
            assert item == f"body {i}".encode()
    assert fetch.max_in_flight <= 4


def test_empty():
    assert asyncio.run(fetch_all([], Recorder(), limit=3)) == []
