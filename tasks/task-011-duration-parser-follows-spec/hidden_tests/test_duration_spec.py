
from timeparse import parse_duration

VALID = [
    ("90", 90), ("45s", 45), ("1h30m", 5400), ("1h 30m", 5400), ("2D", 172800),
    ("1d2h3m4s", 93784), (" 10m ", 600), ("0s", 0),
    # consistent with the grammar, beyond the table
    ("1H", 3600), ("3d 4s", 259204), ("2h\t5s", 7205), ("0", 0), ("15M", 900),
]
INVALID = ["", "   ", "5x", "-5m", "+5m", "1.5h", "30m1h", "1h1h", "h", "m5", "1h30", "5 m",
           "1hh", "1h-30m", "1w", "ten s"]


def test_valid_examples():
    bad = {text: parse_duration(text) for text, want in VALID if parse_duration(text) != want}
    assert not bad


def test_errors():
    accepted = {}
    for text in INVALID:
        try:
            accepted[text] = parse_duration(text)
        except ValueError:
            pass
    assert not accepted, f"should raise ValueError: {accepted}"


def test_returns_int():
    assert type(parse_duration("1h")) is int
