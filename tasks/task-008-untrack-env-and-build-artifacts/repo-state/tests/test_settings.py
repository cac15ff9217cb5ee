from shop import settings


def test_default_db(monkeypatch):
    monkeypatch.delenv("SHOP_DB_URL", raising=False)
    assert settings.db_url() == "sqlite:///shop.db"
