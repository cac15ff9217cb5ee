import asyncio

from crawler import fetch_all


async def fake_fetch(url):
    await asyncio.sleep(0)
    return url.encode()


def test_fetches_everything_in_order():
    urls = [f"https://example.org/{i}" for i in range(10)]
    assert asyncio.run(fetch_all(urls, fake_fetch)) == [u.encode() for u in urls]
