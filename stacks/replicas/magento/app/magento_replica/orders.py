"""Customer-side order pages: My Orders and an order's view."""
from flask import g

from mage import q, q1
from .routing import route
from .storefront import customer, front_page, require_customer
from .web import E, abs_url, price_html, redirect


# -- orders (customer side)
@route(r"/sales/order/history/")
def order_history():
    need = require_customer()
    if need:
        return need
    rows = q(g.conn, "SELECT * FROM sales_order WHERE customer_id=%s ORDER BY created_at DESC", (customer()["entity_id"],))
    trs = "".join('<tr><td data-th="Order #" class="col id">%s</td><td data-th="Date" class="col date">%s</td><td data-th="Order Total" class="col total">%s</td>'
                  '<td data-th="Status" class="col status">%s</td><td class="col actions"><a href="%s" class="action view"><span>View Order</span></a></td></tr>'
                  % (o["increment_id"], o["created_at"].strftime("%m/%d/%y"), price_html(float(o["grand_total"])), o["status"].capitalize(),
                     abs_url("/sales/order/view/order_id/%d/" % o["entity_id"])) for o in rows)
    return front_page("My Orders", '<div class="table-wrapper orders-history"><table class="data table table-order-items history" id="my-orders-table"><thead><tr>'
                      '<th class="col id">Order #</th><th class="col date">Date</th><th class="col total">Order Total</th><th class="col status">Status</th><th class="col actions">Action</th></tr></thead><tbody>%s</tbody></table></div>' % trs)


@route(r"/sales/order/view/order_id/(?P<oid>\d+)/(?:.*)")
def order_view(oid):
    need = require_customer()
    if need:
        return need
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s AND customer_id=%s", (oid, customer()["entity_id"]))
    if not o:
        return redirect("/sales/order/history/")
    items = q(g.conn, "SELECT * FROM sales_order_item WHERE order_id=%s AND parent_item_id IS NULL ORDER BY item_id", (oid,))
    trs = "".join('<tbody><tr id="order-item-row-%d"><td class="col name" data-th="Product Name"><strong class="product name product-item-name">%s</strong></td>'
                  '<td class="col sku" data-th="SKU">%s</td><td class="col price" data-th="Price">%s</td><td class="col qty" data-th="Qty"><ul class="items-qty">'
                  '<li class="item"><span class="title">Ordered</span><span class="content">%g</span></li></ul></td><td class="col subtotal" data-th="Subtotal">%s</td></tr></tbody>'
                  % (i["item_id"], E(i["name"]), E(i["sku"]), price_html(float(i["price"])), float(i["qty_ordered"]), price_html(float(i["row_total"]))) for i in items)
    body = ('<div class="order-status">%s</div><div class="order-date"><span class="label">Order Date:</span> <date>%s</date></div>'
            '<div class="order-details-items ordered"><div class="order-title"><strong>Items Ordered</strong></div><div class="table-wrapper order-items">'
            '<table class="data table table-order-items" id="my-orders-table" summary="Items Ordered"><caption class="table-caption">Items Ordered</caption>'
            '<thead><tr><th class="col name">Product Name</th><th class="col sku">SKU</th><th class="col price">Price</th><th class="col qty">Qty</th><th class="col subtotal">Subtotal</th></tr></thead>'
            '%s<tfoot><tr class="grand_total"><th colspan="4" class="mark" scope="row"><strong>Grand Total</strong></th><td class="amount" data-th="Grand Total"><strong>%s</strong></td></tr></tfoot></table></div></div>'
            % (o["status"].capitalize(), o["created_at"].strftime("%B %-d, %Y"), trs, price_html(float(o["grand_total"]))))
    return front_page("Order # %s" % o["increment_id"], body, body_class="account sales-order-view")
