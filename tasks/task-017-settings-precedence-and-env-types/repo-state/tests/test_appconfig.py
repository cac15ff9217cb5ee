from appconfig import load_settings


def test_defaults():
    assert load_settings([], {}) == {"host": "127.0.0.1", "port": 8000, "debug": False, "workers": 1}


def test_cli_flags():
    assert load_settings(["--port", "9000", "--debug"], {})["port"] == 9000
