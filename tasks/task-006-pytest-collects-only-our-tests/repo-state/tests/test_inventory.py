import pytest

from inventory import Inventory


def test_add_and_count():
    inv = Inventory()
    inv.add("apple", 3)
    assert inv.count("apple") == 3


def test_remove_too_many():
    inv = Inventory()
    inv.add("apple", 1)
    with pytest.raises(ValueError):
        inv.remove("apple", 2)


def test_unknown_sku_is_zero():
    assert Inventory().count("pear") == 0


@pytest.mark.slow
def test_many_skus():
    inv = Inventory()
    for i in range(20000):
        inv.add(f"sku-{i}", 1)
    assert sum(inv.count(f"sku-{i}") for i in range(20000)) == 20000


@pytest.mark.slow
@pytest.mark.integration
def test_round_trip_through_many_operations():
    inv = Inventory()
    for _ in range(1000):
        inv.add("x", 2)
        inv.remove("x", 1)
    assert inv.count("x") == 1000
