from tinyjson import _speedups  # built by upstream's setup.py, not by us


def test_encode_basestring():
    assert _speedups.encode_basestring("a") == '"a"'
