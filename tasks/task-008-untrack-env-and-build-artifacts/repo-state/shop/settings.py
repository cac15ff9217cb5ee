"""Settings from the environment (a local .env is loaded by the process manager)."""

import os


def db_url() -> str:
    return os.environ.get("SHOP_DB_URL", "sqlite:///shop.db")


def debug() -> bool:
    return os.environ.get("SHOP_DEBUG", "0") == "1"
