import asyncio

import pytest
from crawler import fetch_all


class Recorder:
    """A fake fetch: tracks requests in flight; takes a URL-dependent number of loop turns."""

    def __init__(self, fail=()):
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = []
        self.fail = fail if isinstance(fail, dict) else {url: ValueError for url in fail}

    async def __call__(self, url):
        self.started.append(url)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            n = int(url.rsplit("/", 1)[1])
            for _ in range((n * 7) % 5 + 1):  # completion order differs from input order
                await asyncio.sleep(0)
            if url in self.fail:
                raise self.fail[url](f"boom {url}")
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


class QuotaExceeded(Exception):
    """An exception type of the caller's own."""


def test_any_exception_lands_in_its_slot():
    kinds = [ConnectionError, TimeoutError, RuntimeError, KeyError, OSError, QuotaExceeded]
    all_urls = urls(18)
    fail = {all_urls[i * 3 + 1]: kind for i, kind in enumerate(kinds)}
    result = asyncio.run(fetch_all(all_urls, Recorder(fail=fail), limit=4))
    assert len(result) == 18
    for i, (url, item) in enumerate(zip(all_urls, result)):
        if url in fail:
            assert type(item) is fail[url], (url, item)
        else:
            assert item == f"body {i}".encode()


def test_repeated_urls_each_get_their_slot():
    base = urls(6)
    repeated = [base[0], base[3], base[0], base[5], base[3], base[0], base[1]]
    fetch = Recorder(fail={base[5]: ValueError})
    result = asyncio.run(fetch_all(repeated, fetch, limit=2))
    assert len(result) == len(repeated)
    for url, item in zip(repeated, result):
        n = int(url.rsplit("/", 1)[1])
        if url == base[5]:
            assert isinstance(item, ValueError)
        else:
            assert item == f"body {n}".encode(), (url, item)
    assert fetch.max_in_flight <= 2


def test_limit_larger_than_the_work():
    fetch = Recorder()
    result = asyncio.run(fetch_all(urls(7), fetch, limit=50))
    assert result == [f"body {i}".encode() for i in range(7)]
    assert fetch.max_in_flight == 7


def test_the_callers_urls_are_left_alone_and_any_sequence_works():
    given = urls(9)
    before = list(given)
    result = asyncio.run(fetch_all(given, Recorder(), limit=2))
    assert given == before, "fetch_all changed the list of URLs it was given"
    assert result == [f"body {i}".encode() for i in range(9)]
    assert asyncio.run(fetch_all(tuple(urls(4)), Recorder(), limit=2)) == [
        f"body {i}".encode() for i in range(4)]


def test_each_call_has_its_own_limit():
    """Two crawls at once, each with limit 3: each may have 3 requests in flight (a limit
    shared between calls, e.g. a semaphore cached per limit value, halves each one)."""
    first, second = Recorder(), Recorder()

    async def both():
        return await asyncio.gather(fetch_all(urls(30), first, limit=3),
                                    fetch_all(urls(30), second, limit=3))

    one, two = asyncio.run(both())
    assert one == two == [f"body {i}".encode() for i in range(30)]
    assert first.max_in_flight == 3 and second.max_in_flight == 3
    total = Recorder()

    async def shared():
        return await asyncio.gather(fetch_all(urls(30), total, limit=3),
                                    fetch_all(urls(30), total, limit=3))

    asyncio.run(shared())
    assert total.max_in_flight == 6, f"two calls with limit 3 peaked at {total.max_in_flight}"
