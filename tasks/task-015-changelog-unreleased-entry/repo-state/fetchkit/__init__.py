"""Tiny HTTP fetching helpers."""

import json
import urllib.request

DEFAULT_TIMEOUT = 30.0


def fetch(url: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def fetch_json(url: str, timeout: float = DEFAULT_TIMEOUT):
    return json.loads(fetch(url, timeout=timeout))
