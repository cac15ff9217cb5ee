"""Fetch many URLs concurrently, politely."""

import asyncio
from typing import Awaitable, Callable, Sequence


async def fetch_all(
    urls: Sequence[str], fetch: Callable[[str], Awaitable[bytes]], limit: int = 5
) -> list:
    """Fetch every URL, with at most `limit` fetches in flight at any moment.

    Returns one entry per URL, in input order: the fetched body, or the exception that fetching
    that URL raised.
    """

    async def fetch_one(url: str):
        semaphore = asyncio.Semaphore(limit)
        async with semaphore:
            return await fetch(url)

    return await asyncio.gather(*(fetch_one(url) for url in urls))
