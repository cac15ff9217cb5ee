"""Service settings: defaults < config file (JSON) < environment (APP_*) < command line."""

import argparse
import json
import os
from pathlib import Path

DEFAULTS = {"host": "127.0.0.1", "port": 8000, "debug": False, "workers": 1}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="serve")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--debug", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--config", type=Path)
    return parser


def load_settings(argv=None, environ=None) -> dict:
    environ = os.environ if environ is None else environ
    args = _parser().parse_args(argv)
    settings = dict(DEFAULTS)
    if args.config is not None:
        settings.update(json.loads(args.config.read_text()))
    for key in DEFAULTS:
        value = getattr(args, key)
        if value is not None:
            settings[key] = value
    for key in DEFAULTS:
        value = environ.get(f"APP_{key.upper()}")
        if value:
            settings[key] = value
    settings["debug"] = bool(settings["debug"])
    return settings
