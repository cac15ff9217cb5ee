"""Export orders to CSV, a page at a time (the real source is a paged API)."""

import csv
import io

from pagination import iter_pages

PAGE_SIZE = 25


def export_orders(orders, per_page: int = PAGE_SIZE) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "customer", "total"])
    for page in iter_pages(orders, per_page):
        for order in page:
            writer.writerow([order["id"], order["customer"], order["total"]])
    return out.getvalue()
