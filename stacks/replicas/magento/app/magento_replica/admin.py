"""Admin area (/admin): login form and backend dispatch, dashboard, products, orders, reviews,
CMS pages, customers."""
import re
import time
from datetime import datetime

from flask import g, make_response, request

import mage
from mage import ex, q, q1
from .routing import match, route
from .web import E, SIGNIN_FAIL, abs_url, form_key_ok, messages_html, price_html, redirect

# ================================================================ admin (/admin) ==========
ADMIN_MENU = [("Dashboard", "/admin/admin/dashboard/"), ("Sales", "/admin/sales/order/"), ("Catalog", "/admin/catalog/product/"),
              ("Customers", "/admin/customer/index/"), ("Marketing", "/admin/review/product/"), ("Content", "/admin/cms/page/"),
              ("Reports", "/admin/reports/"), ("Stores", "/admin/admin/system_config/"), ("System", "/admin/admin/system_account/index/")]


def admin_user():
    uid = g.sess.get("admin_user_id")
    return uid and q1(g.conn, "SELECT * FROM admin_user WHERE user_id=%s AND is_active=1", (uid,))


def admin_page(title, body, status=200, body_class=""):
    menu = "".join('<li class="level-0"><a href="%s"><span>%s</span></a></li>' % (abs_url(h), t) for t, h in ADMIN_MENU)
    u = admin_user()
    doc = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s / Magento Admin</title><meta name="generator" content="sitectl Magento contract replica"></head>
<body class="adminhtml %s" data-container="body"><div class="page-wrapper"><aside class="page-wrapper-sidebar"><nav class="admin__menu" id="nav"><ul id="nav" role="menubar">%s</ul></nav></aside>
<div class="page-header"><div class="admin-user admin__action-dropdown-wrap"><span class="admin__action-dropdown-text"><span class="admin-user-account-text">%s</span></span>
<a href="%s" class="account-signout" title="Sign Out">Sign Out</a></div></div>
<main id="anchor-content" class="page-content"><div class="page-title-wrapper"><h1 class="page-title">%s</h1></div>%s<div class="admin__scope-old">%s</div></main>
<footer class="page-footer"><p class="magento-version"><strong>sitectl contract replica</strong> of Magento ver. 2.4.6</p></footer></div></body></html>""" % (
        E(title), body_class, menu, E(u["username"]) if u else "", abs_url("/admin/admin/auth/logout/"), E(title), messages_html(), body)
    return make_response(doc, status)


def admin_login_form(status=200):
    """Backend/view/adminhtml/templates/admin/login.phtml shape (contract-magento.md §2)."""
    fk = g.sess.form_key()
    doc = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Magento Admin</title><meta name="generator" content="sitectl Magento contract replica"></head>
<body id="html-body" class="adminhtml-auth-login page-layout-admin-login"><section class="page-wrapper"><div class="login-header">%s</div>
<form method="post" action="" id="login-form" autocomplete="off"><fieldset class="admin__fieldset"><legend class="admin__legend"><span>Welcome, please sign in</span></legend><br>
<input name="form_key" type="hidden" value="%s">
<div class="admin__field _required field-username"><label for="username" class="admin__field-label"><span>Username</span></label><div class="admin__field-control">
<input id="username" class="admin__control-text" type="text" name="login[username]" autofocus value="" placeholder="user name" autocomplete="off"></div></div>
<div class="admin__field _required field-password"><label for="login" class="admin__field-label"><span>Password</span></label><div class="admin__field-control">
<input id="login" class="admin__control-text" type="password" name="login[password]" placeholder="password" autocomplete="off"></div></div>
<div class="form-actions"><div class="actions"><button class="action-login action-primary"><span>Sign in</span></button></div>
<div class="links"><a class="action-forgotpassword" href="%s">Forgot your password?</a></div></div></fieldset></form>
<footer class="login-footer"><span>sitectl contract replica of the Magento admin</span></footer></section></body></html>""" % (
        messages_html(), fk, abs_url("/admin/admin/auth/forgotpassword/"))
    return make_response(doc, status)


def admin_dispatch(path):
    if not admin_user():
        if request.method == "POST" and "login[username]" in request.form:
            if not form_key_ok():
                g.sess.flash("error", "Invalid Form Key. Please refresh the page.")
                return redirect(request.full_path.rstrip("?"))
            u = q1(g.conn, "SELECT * FROM admin_user WHERE username=%s", (request.form.get("login[username]", ""),))
            locked = u and u["lock_expires"] and u["lock_expires"] > datetime.utcnow()
            if u and u["is_active"] and not locked and mage.verify_password(request.form.get("login[password]", ""), u["password"]):
                ex(g.conn, "UPDATE admin_user SET logdate=UTC_TIMESTAMP(), lognum=lognum+1, failures_num=0, first_failure=NULL, lock_expires=NULL WHERE user_id=%s", (u["user_id"],))
                fk = g.sess.form_key()
                g.sess.regenerate()
                g.sess.clear()
                g.sess.update({"admin_user_id": u["user_id"], "_form_key": fk})
                life = float(g.cfg.get("admin/security/password_lifetime") or 0)
                last = q1(g.conn, "SELECT last_updated FROM admin_passwords WHERE user_id=%s ORDER BY password_id DESC LIMIT 1", (u["user_id"],))
                if life and last and last["last_updated"] + life * 86400 < time.time():
                    g.sess["pw_expired"] = 1
                    g.sess.flash("notice", "It's time to change your password.")
                return redirect(request.full_path.rstrip("?"))
            if u and not locked:
                ex(g.conn, "UPDATE admin_user SET failures_num=failures_num+1, first_failure=COALESCE(first_failure, UTC_TIMESTAMP()), "
                           "lock_expires=IF(failures_num>=6, UTC_TIMESTAMP() + INTERVAL 30 MINUTE, NULL) WHERE user_id=%s", (u["user_id"],))
            g.sess.flash("error", SIGNIN_FAIL)
        return admin_login_form()
    if g.sess.get("pw_expired") and g.cfg.get("admin/security/password_is_forced", "1") == "1" \
            and float(g.cfg.get("admin/security/password_lifetime") or 0) and not re.match(r"^/admin/admin/(system_account|auth/logout)", path):
        return redirect("/admin/admin/system_account/index/")
    fn, kw = match(path, "admin")
    if fn:
        if request.method == "POST" and not form_key_ok():
            g.sess.flash("error", "Invalid Form Key. Please refresh the page.")
            return redirect("/admin/admin/dashboard/")
        return fn(**kw)
    # Backend no-route handler: 404 page inside the admin layout (menu contains "Dashboard")
    return admin_page("404 Error", "<h2>Page not found.</h2>", 404, "adminhtml-noroute-index")


@route(r"/admin/(?:admin/)?(?:index/(?:index/)?)?", area="admin")
def admin_root():
    return redirect("/admin/admin/dashboard/")


@route(r"/admin/admin/dashboard/(?:index/)?(?:.*)", area="admin")
def admin_dashboard():
    n_orders = q1(g.conn, "SELECT COUNT(*) n, COALESCE(SUM(grand_total),0) s FROM sales_order")
    last = q(g.conn, "SELECT * FROM sales_order ORDER BY created_at DESC LIMIT 5")
    rows = "".join("<tr><td>%s %s</td><td>%g</td><td>%s</td></tr>" % (E(o["customer_firstname"] or ""), E(o["customer_lastname"] or ""), float(o["total_qty_ordered"] or 0),
                                                                      price_html(float(o["grand_total"]))) for o in last)
    return admin_page("Dashboard", '<div class="dashboard-container"><div class="dashboard-totals"><ul class="dashboard-totals-list"><li class="dashboard-totals-item">'
                      '<span class="dashboard-totals-label">Revenue</span><strong class="dashboard-totals-value">%s</strong></li><li class="dashboard-totals-item">'
                      '<span class="dashboard-totals-label">Orders</span><strong class="dashboard-totals-value">%d</strong></li></ul></div>'
                      '<div class="dashboard-item"><div class="dashboard-item-title">Last Orders</div><table class="admin__table-primary dashboard-data"><thead><tr><th>Customer</th><th>Items</th><th>Total</th></tr></thead><tbody>%s</tbody></table></div></div>'
                      % (price_html(float(n_orders["s"])), n_orders["n"], rows), body_class="adminhtml-dashboard-index")


@route(r"/admin/admin/system_account/(?:index/)?", area="admin")
def admin_account():
    u = admin_user()
    return admin_page("Account Setting", '<form id="edit_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><fieldset class="fieldset admin__fieldset">'
                      '<input name="username" id="username" value="%s"><input name="password" id="password" type="password"><input name="current_password" id="current_password" type="password">'
                      '</fieldset></form>' % (abs_url("/admin/admin/system_account/save/"), g.sess.form_key(), E(u["username"])))


@route(r"/admin/admin/auth/logout/(?:.*)", area="admin")
def admin_logout():
    g.sess.regenerate()
    g.sess.clear()
    g.sess.flash("success", "You have logged out.")
    return redirect("/admin/")


@route(r"/admin/catalog/product/(?:index/)?", area="admin")
def admin_products():
    rows = q(g.conn, "SELECT entity_id FROM catalog_product_entity ORDER BY entity_id LIMIT 200")
    trs = []
    for p in mage.products(g.conn, [r["entity_id"] for r in rows]):
        trs.append('<tr class="data-row"><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%g</td><td>%s</td><td><a class="action-menu-item" href="%s">Edit</a></td></tr>'
                   % (p["entity_id"], E(p["name"] or ""), p["type_id"], E(p["sku"]), price_html(p["price"]), p["qty"], "Enabled" if p["status"] == 1 else "Disabled",
                      abs_url("/admin/catalog/product/edit/id/%d/" % p["entity_id"])))
    return admin_page("Products", '<table class="data-grid"><thead><tr><th>ID</th><th>Name</th><th>Type</th><th>SKU</th><th>Price</th><th>Quantity</th><th>Status</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % "".join(trs),
                      body_class="catalog-product-index")


@route(r"/admin/catalog/product/edit/id/(?P<pid>\d+)/(?:.*)", area="admin")
def admin_product_edit(pid):
    p = mage.product(g.conn, int(pid))
    if not p:
        g.sess.flash("error", "This product doesn't exist.")
        return redirect("/admin/catalog/product/")
    sel = lambda cur, opts: "".join('<option value="%s"%s>%s</option>' % (v, " selected" if str(cur) == str(v) else "", t) for v, t in opts)
    conf = ('<div class="fieldset-wrapper admin__collapsible-block-wrapper" data-index="configurable"><div class="fieldset-wrapper-title"><strong class="admin__collapsible-title"><span>Configurations</span></strong></div>'
            '<div class="admin__fieldset-wrapper-content"><p>Configurable product: options Size (XS, S, M, L, XL) and Color.</p></div></div>') if p["type_id"] == "configurable" else ""
    body = """<form id="product_form" method="post" action="{action}" data-form="edit-product"><input name="form_key" type="hidden" value="{fk}">
<div class="page-actions"><button id="save-button" title="Save" type="submit" class="action-default scalable save primary"><span>Save</span></button></div>
<div class="fieldset-wrapper" data-index="product-details"><fieldset class="admin__fieldset">
<div class="admin__field" data-index="status"><label class="admin__field-label" for="product_status"><span>Enable Product</span></label><div class="admin__field-control">
<select class="admin__control-select" name="product[status]" id="product_status">{status}</select></div></div>
<div class="admin__field" data-index="name"><label class="admin__field-label" for="product_name"><span>Product Name</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[name]" id="product_name" value="{name}"></div></div>
<div class="admin__field" data-index="sku"><label class="admin__field-label" for="product_sku"><span>SKU</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[sku]" id="product_sku" value="{sku}"></div></div>
<div class="admin__field" data-index="price"><label class="admin__field-label" for="product_price"><span>Price</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[price]" id="product_price" value="{price}"></div></div>
<div class="admin__field" data-index="qty"><label class="admin__field-label" for="product_qty"><span>Quantity</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[quantity_and_stock_status][qty]" id="product_qty" value="{qty}"></div></div>
<div class="admin__field" data-index="quantity_and_stock_status"><label class="admin__field-label" for="product_stock"><span>Stock Status</span></label><div class="admin__field-control">
<select class="admin__control-select" name="product[quantity_and_stock_status][is_in_stock]" id="product_stock">{stock}</select></div></div>
<div class="admin__field" data-index="url_key"><label class="admin__field-label" for="product_url_key"><span>URL Key</span></label><div class="admin__field-control"><input class="admin__control-text" type="text" name="product[url_key]" id="product_url_key" value="{url_key}"></div></div>
</fieldset></div>{conf}
<div class="fieldset-wrapper" data-index="content"><textarea name="product[description]" id="product_description">{desc}</textarea></div></form>""".format(
        action=abs_url("/admin/catalog/product/save/id/%d/type/%s/store/0/set/%d/back/edit/" % (p["entity_id"], p["type_id"], p["attribute_set_id"])),
        fk=g.sess.form_key(), status=sel(p["status"], [(1, "Yes"), (2, "No")]), name=E(p["name"] or ""), sku=E(p["sku"]),
        price="%.2f" % p["price"], qty="%g" % p["qty"], stock=sel(p["is_in_stock"], [(1, "In Stock"), (0, "Out of Stock")]), url_key=E(p["url_key"] or ""),
        conf=conf, desc=E(p["description"] or ""))
    return admin_page(p["name"] or "Product", body, body_class="catalog-product-edit")


@route(r"/admin/catalog/product/save/(?:id/(?P<pid>\d+)/)?(?:.*)", ("POST",), area="admin")
def admin_product_save(pid=None):
    f = request.form
    if not pid:
        return redirect("/admin/catalog/product/")
    pid = int(pid)
    if not mage.product(g.conn, pid):
        return redirect("/admin/catalog/product/")
    for code, key in (("name", "product[name]"), ("price", "product[price]"), ("status", "product[status]"), ("url_key", "product[url_key]"), ("description", "product[description]")):
        if key in f:
            mage.set_attr(g.conn, pid, code, f[key])
    if "product[sku]" in f:
        ex(g.conn, "UPDATE catalog_product_entity SET sku=%s WHERE entity_id=%s", (f["product[sku]"], pid))
    qty, st = f.get("product[quantity_and_stock_status][qty]"), f.get("product[quantity_and_stock_status][is_in_stock]")
    mage.set_stock(g.conn, pid, float(qty) if qty not in (None, "") else None, int(st) if st not in (None, "") else None)
    ex(g.conn, "UPDATE catalog_product_entity SET updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (pid,))
    g.sess.flash("success", "You saved the product.")
    return redirect("/admin/catalog/product/edit/id/%d/" % pid)


STATUS_LABEL = {"pending": "Pending", "processing": "Processing", "complete": "Complete", "canceled": "Canceled", "holded": "On Hold", "closed": "Closed"}


@route(r"/admin/sales/order/(?:index/)?", area="admin")
def admin_orders():
    rows = q(g.conn, "SELECT * FROM sales_order_grid ORDER BY created_at DESC LIMIT 200")
    trs = "".join('<tr class="data-row"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><a href="%s">View</a></td></tr>'
                  % (r["increment_id"], r["created_at"], E(r["billing_name"] or ""), price_html(float(r["grand_total"])), STATUS_LABEL.get(r["status"], r["status"]),
                     abs_url("/admin/sales/order/view/order_id/%d/" % r["entity_id"])) for r in rows)
    return admin_page("Orders", '<table class="data-grid"><thead><tr><th>ID</th><th>Purchase Date</th><th>Bill-to Name</th><th>Grand Total (Purchased)</th><th>Status</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % trs)


def history_html(oid):
    hs = q(g.conn, "SELECT * FROM sales_order_status_history WHERE parent_id=%s ORDER BY created_at DESC, entity_id DESC", (oid,))
    return '<ul class="note-list">%s</ul>' % "".join(
        '<li class="note-list-item"><span class="note-list-date">%s</span> <span class="note-list-status">%s</span> <div class="note-list-comment">%s</div></li>'
        % (h["created_at"], STATUS_LABEL.get(h["status"], h["status"] or ""), E(h["comment"] or "")) for h in hs)


@route(r"/admin/sales/order/view/order_id/(?P<oid>\d+)/(?:.*)", area="admin")
def admin_order_view(oid):
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s", (oid,))
    if not o:
        g.sess.flash("error", "This order no longer exists.")
        return redirect("/admin/sales/order/")
    items = q(g.conn, "SELECT * FROM sales_order_item WHERE order_id=%s", (oid,))
    trs = "".join("<tr><td><div class=\"product-title\">%s</div><div class=\"product-sku-block\"><span>SKU:</span> %s</div></td><td>%s</td><td>Ordered %g</td><td>%s</td></tr>"
                  % (E(i["name"]), E(i["sku"]), price_html(float(i["price"])), float(i["qty_ordered"]), price_html(float(i["row_total"]))) for i in items)
    opts = "".join('<option value="%s"%s>%s</option>' % (k, " selected" if k == o["status"] else "", v) for k, v in STATUS_LABEL.items())
    body = """<section class="admin__page-section order-view-account-information"><div class="admin__page-section-item order-information">
<table class="admin__table-secondary order-information-table"><tr><th>Order Date</th><td>{date}</td></tr><tr><th>Order Status</th><td><span id="order_status">{status}</span></td></tr></table></div>
<div class="admin__page-section-item order-account-information"><table class="admin__table-secondary"><tr><th>Customer Name</th><td>{name}</td></tr><tr><th>Email</th><td>{email}</td></tr></table></div></section>
<section class="admin__page-section"><div class="admin__page-section-title"><span class="title">Items Ordered</span></div><table class="data-table admin__table-primary edit-order-table"><thead><tr><th>Product</th><th>Original Price</th><th>Qty</th><th>Row Total</th></tr></thead><tbody>{items}</tbody></table></section>
<section class="admin__page-section"><div class="admin__page-section-title"><span class="title">Order Total</span></div><div id="order_history_block" class="edit-order-comments">
<form method="post" action="{action}"><input name="form_key" type="hidden" value="{fk}"><select name="history[status]" id="history_status">{opts}</select>
<textarea name="history[comment]" id="history_comment"></textarea><button type="submit" class="action-save action-secondary"><span>Submit Comment</span></button></form>{hist}</div>
<table class="data-table admin__table-secondary order-subtotal-table"><tfoot><tr class="col-0"><td class="label"><strong>Grand Total</strong></td><td><strong>{total}</strong></td></tr></tfoot></table></section>""".format(
        date=o["created_at"], status=STATUS_LABEL.get(o["status"], o["status"]), name=E("%s %s" % (o["customer_firstname"], o["customer_lastname"])), email=E(o["customer_email"]),
        items=trs, action=abs_url("/admin/sales/order/addComment/order_id/%d/" % o["entity_id"]), fk=g.sess.form_key(), opts=opts, hist=history_html(o["entity_id"]),
        total=price_html(float(o["grand_total"])))
    return admin_page("# %s" % o["increment_id"], body, body_class="sales-order-view")


@route(r"/admin/sales/order/commentshistory/order_id/(?P<oid>\d+)/(?:.*)", area="admin")
def admin_order_comments(oid):
    return make_response('<div class="edit-order-comments-block">%s</div>' % history_html(int(oid)))


@route(r"/admin/sales/order/addcomment/order_id/(?P<oid>\d+)/(?:.*)", ("POST",), area="admin")
def admin_order_add_comment(oid):
    o = q1(g.conn, "SELECT * FROM sales_order WHERE entity_id=%s", (oid,))
    if o:
        st = request.form.get("history[status]") or o["status"]
        ex(g.conn, "INSERT INTO sales_order_status_history (parent_id, is_customer_notified, is_visible_on_front, comment, status, created_at, entity_name) VALUES (%s,0,0,%s,%s,UTC_TIMESTAMP(),'order')",
           (o["entity_id"], request.form.get("history[comment]", ""), st))
        ex(g.conn, "UPDATE sales_order SET status=%s, updated_at=UTC_TIMESTAMP() WHERE entity_id=%s", (st, o["entity_id"]))
        ex(g.conn, "UPDATE sales_order_grid SET status=%s WHERE entity_id=%s", (st, o["entity_id"]))
    return redirect("/admin/sales/order/view/order_id/%s/" % oid)


@route(r"/admin/review/product/(?:index/)?", area="admin")
def admin_reviews():
    rows = q(g.conn, "SELECT r.review_id, r.created_at, r.status_id, d.title, d.nickname FROM review r JOIN review_detail d USING (review_id) ORDER BY r.review_id DESC LIMIT 200")
    trs = "".join('<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><a href="%s">Edit</a></td></tr>' % (
        r["review_id"], r["created_at"], {1: "Approved", 2: "Pending", 3: "Not Approved"}[r["status_id"]], E(r["title"]), E(r["nickname"]),
        abs_url("/admin/review/product/edit/id/%d/" % r["review_id"])) for r in rows)
    return admin_page("Reviews", '<table class="data-grid"><thead><tr><th>ID</th><th>Created</th><th>Status</th><th>Title</th><th>Nickname</th><th>Action</th></tr></thead><tbody>%s</tbody></table>' % trs)


@route(r"/admin/review/product/edit/id/(?P<rid>\d+)/(?:.*)", area="admin")
def admin_review_edit(rid):
    r = q1(g.conn, "SELECT * FROM review r JOIN review_detail d USING (review_id) WHERE r.review_id=%s", (rid,))
    if not r:
        g.sess.flash("error", "The review was removed by another user or does not exist.")
        return redirect("/admin/review/product/")
    p = mage.product(g.conn, r["entity_pk_value"])
    opts = "".join('<option value="%d"%s>%s</option>' % (k, " selected" if k == r["status_id"] else "", v) for k, v in ((1, "Approved"), (2, "Pending"), (3, "Not Approved")))
    body = ('<form id="edit_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><fieldset class="fieldset admin__fieldset" id="review_details">'
            '<div class="admin__field"><label class="admin__field-label">Product</label><div class="admin__field-control"><a href="%s">%s</a></div></div>'
            '<div class="admin__field"><label class="admin__field-label" for="status_id">Status</label><select id="status_id" name="status_id" class="admin__control-select">%s</select></div>'
            '<div class="admin__field"><label class="admin__field-label" for="nickname">Nickname</label><input id="nickname" name="nickname" value="%s"></div>'
            '<div class="admin__field"><label class="admin__field-label" for="title">Summary of Review</label><input id="title" name="title" value="%s"></div>'
            '<div class="admin__field"><label class="admin__field-label" for="detail">Review</label><textarea id="detail" name="detail">%s</textarea></div></fieldset>'
            '<button id="save_button" type="submit" class="action-primary"><span>Save Review</span></button></form>'
            % (abs_url("/admin/review/product/save/id/%s/" % rid), g.sess.form_key(), abs_url("/admin/catalog/product/edit/id/%d/" % p["entity_id"]) if p else "#",
               E(p["name"] if p else ""), opts, E(r["nickname"]), E(r["title"]), E(r["detail"])))
    return admin_page("Edit Review '%s'" % r["title"], body)


@route(r"/admin/review/product/save/id/(?P<rid>\d+)/(?:.*)", ("POST",), area="admin")
def admin_review_save(rid):
    f = request.form
    if "status_id" in f:
        ex(g.conn, "UPDATE review SET status_id=%s WHERE review_id=%s", (int(f["status_id"]), rid))
    for col in ("nickname", "title", "detail"):
        if col in f:
            ex(g.conn, "UPDATE review_detail SET %s=%%s WHERE review_id=%%s" % col, (f[col], rid))
    g.sess.flash("success", "You saved the review.")
    return redirect("/admin/review/product/")


@route(r"/admin/cms/page/(?:index/)?", area="admin")
def admin_cms_pages():
    rows = q(g.conn, "SELECT * FROM cms_page ORDER BY page_id")
    return admin_page("Pages", '<table class="data-grid"><tbody>%s</tbody></table>' % "".join(
        '<tr><td>%d</td><td>%s</td><td>%s</td><td><a href="%s">Edit</a></td></tr>' % (r["page_id"], E(r["title"]), E(r["identifier"]), abs_url("/admin/cms/page/edit/page_id/%d/" % r["page_id"])) for r in rows))


@route(r"/admin/cms/page/edit/page_id/(?P<pid>\d+)/(?:.*)", area="admin")
def admin_cms_edit(pid):
    r = q1(g.conn, "SELECT * FROM cms_page WHERE page_id=%s", (pid,))
    if not r:
        return redirect("/admin/cms/page/")
    return admin_page(r["title"], '<form id="cms_page_form" method="post" action="%s"><input name="form_key" type="hidden" value="%s"><input type="hidden" name="page_id" value="%d">'
                      '<div class="admin__field" data-index="title"><label class="admin__field-label">Page Title</label><input class="admin__control-text" type="text" name="title" value="%s"></div>'
                      '<div class="admin__field" data-index="identifier"><label class="admin__field-label">URL Key</label><input class="admin__control-text" type="text" name="identifier" value="%s"></div>'
                      '<textarea name="content">%s</textarea><button type="submit" id="save" class="action-primary">Save</button></form>'
                      % (abs_url("/admin/cms/page/save/"), g.sess.form_key(), r["page_id"], E(r["title"]), E(r["identifier"]), E(r["content"] or "")))


@route(r"/admin/cms/page/save/", ("POST",), area="admin")
def admin_cms_save():
    f = request.form
    ex(g.conn, "UPDATE cms_page SET title=%s, identifier=%s, content=%s, update_time=UTC_TIMESTAMP() WHERE page_id=%s",
       (f.get("title"), f.get("identifier"), f.get("content"), int(f.get("page_id", 0))))
    g.sess.flash("success", "You saved the page.")
    return redirect("/admin/cms/page/")


@route(r"/admin/customer/index/(?:index/)?", area="admin")
def admin_customers():
    rows = q(g.conn, "SELECT * FROM customer_entity ORDER BY entity_id")
    return admin_page("Customers", '<table class="data-grid"><tbody>%s</tbody></table>' % "".join(
        '<tr><td>%d</td><td>%s %s</td><td>%s</td></tr>' % (r["entity_id"], E(r["firstname"]), E(r["lastname"]), E(r["email"])) for r in rows))
