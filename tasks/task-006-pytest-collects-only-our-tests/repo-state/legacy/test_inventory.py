# Tests for the 0.x API, kept for reference while porting the old reports.
from inventory import Inventory


def test_legacy_total():
    inv = Inventory()
    inv.add("apple", 2)
    assert inv.total() == 2  # the 0.x API had total()
