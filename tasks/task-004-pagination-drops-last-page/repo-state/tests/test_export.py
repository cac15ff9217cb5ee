from export import export_orders


def make_orders(n):
    return [{"id": i, "customer": f"c{i}", "total": f"{i}.00"} for i in range(1, n + 1)]


def test_export_full_pages():
    rows = export_orders(make_orders(10), per_page=5).splitlines()
    assert rows[0] == "id,customer,total"
    assert len(rows) == 11


def test_export_includes_every_order():
    rows = export_orders(make_orders(11), per_page=5).splitlines()
    assert len(rows) == 12
    assert rows[-1] == "11,c11,11.00"
