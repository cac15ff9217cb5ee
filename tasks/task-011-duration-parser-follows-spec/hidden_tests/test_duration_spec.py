
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


# An independent reading of the grammar (a scanner, not a regex), checked against the table above.
SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
DIGITS = "0123456789"


def reference(text):
    """Seconds, or None where the spec says ValueError."""
    s = text.strip(" \t")
    if not s:
        return None
    if all(ch in DIGITS for ch in s):
        return int(s)
    total, last_rank, i = 0, -1, 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] in DIGITS:
            j += 1
        if j == i or j == len(s):
            return None  # a unit without a number, or a number without a unit
        unit = s[j].lower()
        if unit not in SECONDS or "dhms".index(unit) <= last_rank:
            return None  # unknown, repeated or out of order
        last_rank = "dhms".index(unit)
        total += int(s[i:j]) * SECONDS[unit]
        i = j + 1
        while i < len(s) and s[i] in " \t":
            i += 1
    return total


def outcome(text):
    try:
        return parse_duration(text)
    except ValueError:
        return None


def fuzz_inputs(seed=2011):
    """Fixed-seed strings: random ones over an alphabet of digits, units, separators and typos,
    and well-formed ones built from the grammar (random units, case, numbers, whitespace)."""
    import random

    rng = random.Random(seed)
    alphabet = DIGITS * 3 + "dhmsDHMS" * 2 + "  \t" + "xw.-+,_:;/!"
    for _ in range(3000):
        yield "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
    for _ in range(600):
        units = sorted(rng.sample("dhms", rng.randint(1, 4)), key="dhms".index)
        parts = [f"{rng.randint(0, 999)}{rng.choice([u, u.upper()])}" for u in units]
        seps = [rng.choice(["", " ", "  ", "\t"]) for _ in parts]
        yield rng.choice(["", " "]) + "".join(p + s for p, s in zip(parts, seps))


def test_reference_agrees_with_the_spec_table():
    assert all(reference(text) == want for text, want in VALID)
    assert all(reference(text) is None for text in INVALID)


def test_fuzz_against_the_grammar():
    wrong = {}
    for text in fuzz_inputs():
        want, got = reference(text), outcome(text)
        if got != want and len(wrong) < 8:
            wrong[text] = (got, want)
    assert not wrong, f"input: (parse_duration, spec) where they differ; None = ValueError: {wrong}"


def test_numbers_of_any_size():
    """"a non-negative integer": no cap on its digits (fuzzed numbers stay below 1000)."""
    assert parse_duration("86400s") == 86400
    assert parse_duration("100000") == 100000
    assert parse_duration("1000d 1s") == 86400001
    assert parse_duration("0012m") == 720


def test_digits_are_ascii_digits():
    """The CLI's users type ASCII digits: other scripts' digits (which str.isdigit() and regex
    \\d accept) are "anything else"."""
    for text in ["\u0662h", "\uff11\uff10m", "\u0661\u0662", "1\u0660s", "\u00b2"]:
        try:
            value = parse_duration(text)
        except ValueError:
            continue
        raise AssertionError(f"{text!r} should raise ValueError, got {value!r}")
