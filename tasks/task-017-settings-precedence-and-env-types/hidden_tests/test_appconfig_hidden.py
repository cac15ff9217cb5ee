import json

import pytest
from appconfig import load_settings


@pytest.mark.parametrize("raw,expected", [
    ("1", True), ("0", False), ("true", True), ("false", False), ("TRUE", True), ("False", False),
    ("yes", True), ("no", False), ("on", True), ("OFF", False),
])
def test_env_booleans(raw, expected):
    assert load_settings([], {"APP_DEBUG": raw})["debug"] is expected


@pytest.mark.parametrize("raw,expected", [
    ("Yes", True), ("nO", False), ("oN", True), ("Off", False), ("tRuE", True), ("FaLsE", False),
    ("YES", True), ("No", False),
])
def test_env_booleans_any_case(raw, expected):
    assert load_settings([], {"APP_DEBUG": raw})["debug"] is expected


@pytest.mark.parametrize("raw", ["maybe", "2", "-1", "t", "y", "enabled", "truee"])
def test_other_boolean_values_raise(raw):
    with pytest.raises(ValueError, match="APP_DEBUG"):
        load_settings([], {"APP_DEBUG": raw})


@pytest.mark.parametrize("name,raw", [("APP_WORKERS", "many"), ("APP_WORKERS", "2.5"),
                                      ("APP_PORT", "80.5"), ("APP_PORT", "9 000")])
def test_every_number_names_its_variable(name, raw):
    with pytest.raises(ValueError, match=name):
        load_settings([], {name: raw})


def test_invalid_boolean_raises():
    with pytest.raises(ValueError, match="APP_DEBUG"):
        load_settings([], {"APP_DEBUG": "maybe"})


def test_env_numbers_are_ints():
    settings = load_settings([], {"APP_PORT": "9100", "APP_WORKERS": "4", "APP_HOST": "0.0.0.0"})
    assert settings == {"host": "0.0.0.0", "port": 9100, "debug": False, "workers": 4}
    assert type(settings["port"]) is int and type(settings["workers"]) is int


def test_invalid_number_raises():
    with pytest.raises(ValueError, match="APP_PORT"):
        load_settings([], {"APP_PORT": "eighty"})


def test_cli_beats_env():
    env = {"APP_PORT": "9100", "APP_DEBUG": "true", "APP_HOST": "0.0.0.0", "APP_WORKERS": "8"}
    settings = load_settings(["--port", "9000", "--no-debug", "--host", "localhost"], env)
    assert settings == {"host": "localhost", "port": 9000, "debug": False, "workers": 8}


def test_env_beats_file_beats_defaults(tmp_path):
    config = tmp_path / "serve.json"
    config.write_text(json.dumps({"port": 7000, "workers": 2, "debug": True}))
    settings = load_settings(["--config", str(config)], {"APP_WORKERS": "3"})
    assert settings == {"host": "127.0.0.1", "port": 7000, "debug": True, "workers": 3}
    settings = load_settings(["--config", str(config), "--workers", "5"], {"APP_WORKERS": "3"})
    assert settings["workers"] == 5


def test_env_false_beats_file_true(tmp_path):
    config = tmp_path / "serve.json"
    config.write_text(json.dumps({"debug": True}))
    assert load_settings(["--config", str(config)], {"APP_DEBUG": "off"})["debug"] is False


def test_unset_env_is_ignored():
    assert load_settings([], {"OTHER": "x"})["port"] == 8000


@pytest.mark.parametrize("content,key,expected", [
    ({"debug": "false"}, "debug", False), ({"debug": "off"}, "debug", False),
    ({"debug": "0"}, "debug", False), ({"debug": "true"}, "debug", True),
    ({"port": "7000"}, "port", 7000), ({"workers": "3"}, "workers", 3),
], ids=["debug-false", "debug-off", "debug-0", "debug-true", "port", "workers"])
def test_file_strings_come_back_typed(tmp_path, content, key, expected):
    """"whatever their source": a string in the JSON file is typed as the setting is (or
    refused with ValueError), never passed through or read with bool()."""
    config = tmp_path / "serve.json"
    config.write_text(json.dumps(content))
    try:
        value = load_settings(["--config", str(config)], {})[key]
    except ValueError:
        return
    assert type(value) is type(expected) and value == expected, (content, value)


def test_repeated_loads_start_from_the_defaults_and_leave_their_inputs_alone(tmp_path):
    env = {"APP_PORT": "9100", "APP_DEBUG": "on", "APP_WORKERS": "4"}
    before = dict(env)
    argv = ["--host", "0.0.0.0"]
    assert load_settings(argv, env) == {"host": "0.0.0.0", "port": 9100, "debug": True,
                                        "workers": 4}
    assert env == before and argv == ["--host", "0.0.0.0"]
    assert load_settings([], {}) == {"host": "127.0.0.1", "port": 8000, "debug": False,
                                     "workers": 1}
