"""Customer account routes: login/logout (contract-magento.md §1.1), dashboard, address book,
newsletter, wish list."""
from datetime import datetime

from flask import g, request

import mage
from mage import ex, q, q1
from .routing import route
from .storefront import customer, front_page, product_card, require_customer
from .web import E, SIGNIN_FAIL, abs_url, form_key_ok, redirect


# -- customer login (Customer/view/frontend/templates/form/login.phtml shape, contract-magento.md §1.1)
@route(r"/customer/account/login/(?:.*)", ("GET", "POST"))
def login_page():
    if customer():
        return redirect("/customer/account/")
    fk = g.sess.form_key()
    body = """<div class="login-container"><div class="block block-customer-login"><div class="block-title"><strong id="block-customer-login-heading" role="heading" aria-level="2">Registered Customers</strong></div>
<div class="block-content" aria-labelledby="block-customer-login-heading">
<form class="form form-login" action="{action}" method="post" id="login-form" novalidate="novalidate"><input name="form_key" type="hidden" value="{fk}">
<fieldset class="fieldset login" data-hasrequired="* Required Fields"><div class="field note">If you have an account, sign in with your email address.</div>
<div class="field email required"><label class="label" for="email"><span>Email</span></label><div class="control">
<input name="login[username]" value="{user}" autocomplete="off" id="email" type="email" class="input-text" title="Email"></div></div>
<div class="field password required"><label for="pass" class="label"><span>Password</span></label><div class="control">
<input name="login[password]" type="password" autocomplete="off" class="input-text" id="pass" title="Password"></div></div>
<div class="field choice" data-bind="scope: 'showPassword'"><input type="checkbox" name="show-password" id="show-password" class="checkbox"><label class="label" for="show-password"><span>Show Password</span></label></div>
<div class="actions-toolbar"><div class="primary"><button type="submit" class="action login primary" name="send" id="send2"><span>Sign In</span></button></div>
<div class="secondary"><a class="action remind" href="{forgot}"><span>Forgot Your Password?</span></a></div></div></fieldset></form></div></div>
<div class="block block-new-customer"><div class="block-title"><strong>New Customers</strong></div></div></div>""".format(
        action=abs_url("/customer/account/loginPost/"), fk=fk, user=E(g.sess.get("login_username", "")), forgot=abs_url("/customer/account/forgotpassword/"))
    r = front_page("Customer Login", body, body_class="customer-account-login")
    r.headers["Login-Required"] = "true"
    return r


@route(r"/customer/account/loginpost/(?:.*)", ("POST",))
def login_post():
    if customer() or not form_key_ok():
        return redirect("/customer/account/")
    user, pw = request.form.get("login[username]", ""), request.form.get("login[password]", "")
    if not user or not pw:
        g.sess.flash("error", "A login and a password are required.")
        return redirect("/customer/account/login/")
    c = q1(g.conn, "SELECT * FROM customer_entity WHERE email=%s AND website_id=1", (user,))
    locked = c and c["lock_expires"] and c["lock_expires"] > datetime.utcnow()
    if not c or locked or not c["is_active"] or not mage.verify_password(pw, c["password_hash"]):
        if c and not locked:
            ex(g.conn, "UPDATE customer_entity SET failures_num=failures_num+1, first_failure=COALESCE(first_failure, UTC_TIMESTAMP()), "
                       "lock_expires=IF(failures_num>=10, UTC_TIMESTAMP() + INTERVAL 10 MINUTE, NULL) WHERE entity_id=%s", (c["entity_id"],))
        g.sess["login_username"] = user
        g.sess.flash("error", SIGNIN_FAIL)
        return redirect("/customer/account/login/")
    ex(g.conn, "UPDATE customer_entity SET failures_num=0, first_failure=NULL, lock_expires=NULL WHERE entity_id=%s", (c["entity_id"],))
    target = g.sess.get("before_auth_url")
    data = {k: v for k, v in g.sess.items() if k in ("quote_id",)}
    g.sess.regenerate()
    g.sess.clear()
    g.sess.update(data)
    g.sess["customer_id"] = c["entity_id"]
    g.sess["_form_key"] = request.form.get("form_key")
    r = redirect(target or "/customer/account/")
    r.delete_cookie("mage-cache-sessid", path="/")
    r.set_cookie("X-Magento-Vary", mage.new_id(40), path="/", httponly=True)
    return r


@route(r"/customer/account/logout/(?:.*)")
def logout():
    g.sess.regenerate()
    g.sess.clear()
    r = redirect("/customer/account/logoutSuccess/")
    r.delete_cookie("X-Magento-Vary", path="/")
    return r


@route(r"/customer/account/logoutsuccess/")
def logout_success():
    return front_page("You are signed out", "<p>You have signed out and will go to our homepage in 5 seconds.</p>")


@route(r"/customer/account/(?:index/)?")
def account():
    need = require_customer()
    if need:
        return need
    c = customer()
    return front_page("My Account", '<div class="block block-dashboard-info"><div class="block-title"><strong>Account Information</strong></div>'
                      '<div class="box box-information"><div class="box-content"><p>%s %s<br>%s</p></div></div></div>'
                      % (E(c["firstname"]), E(c["lastname"]), E(c["email"])), body_class="account customer-account-index")


@route(r"/customer/address/(?:index/)?")
def addresses():
    need = require_customer()
    if need:
        return need
    c = customer()
    def box(aid, cls, title):
        a = q1(g.conn, "SELECT * FROM customer_address_entity WHERE entity_id=%s", (aid,))
        txt = ("%s %s<br>%s<br>%s, %s, %s<br>United States<br>T: <a href='tel:%s'>%s</a>" % tuple(map(E, (a["firstname"], a["lastname"], a["street"], a["city"], a["region"], a["postcode"], a["telephone"], a["telephone"])))) if a else "You have not set a default address."
        return '<div class="box %s"><strong class="box-title"><span>%s</span></strong><div class="box-content"><address>%s</address></div></div>' % (cls, title, txt)
    return front_page("Address Book", '<div class="block block-addresses-default"><div class="block-content">%s%s</div></div>'
                      % (box(c["default_billing"], "box-address-billing", "Default Billing Address"), box(c["default_shipping"], "box-address-shipping", "Default Shipping Address")))


@route(r"/newsletter/manage/(?:index/)?")
def newsletter():
    need = require_customer()
    if need:
        return need
    s = q1(g.conn, "SELECT subscriber_status FROM newsletter_subscriber WHERE customer_id=%s", (customer()["entity_id"],))
    checked = " checked" if s and s["subscriber_status"] == 1 else ""
    return front_page("Newsletter Subscription", '<form class="form form-newsletter-manage" action="%s" method="post" id="form-validate"><input name="form_key" type="hidden" value="%s">'
                      '<fieldset class="fieldset"><div class="field choice"><input type="checkbox" name="is_subscribed" id="subscription" value="1" title="General Subscription" class="checkbox"%s>'
                      '<label for="subscription" class="label"><span>General Subscription</span></label></div></fieldset>'
                      '<button type="submit" title="Save" class="action save primary"><span>Save</span></button></form>'
                      % (abs_url("/newsletter/manage/save/"), g.sess.form_key(), checked))


@route(r"/newsletter/manage/save/", ("POST",))
def newsletter_save():
    need = require_customer()
    if need or not form_key_ok():
        return need or redirect("/newsletter/manage/")
    ex(g.conn, "UPDATE newsletter_subscriber SET subscriber_status=%s, change_status_at=UTC_TIMESTAMP() WHERE customer_id=%s",
       (1 if request.form.get("is_subscribed") else 3, customer()["entity_id"]))
    g.sess.flash("success", "We have saved your subscription.")
    return redirect("/customer/account/")


# -- wishlist (Wishlist/Controller/Index/Plugin: guest -> login redirect; contract-magento.md §1.5)
@route(r"/wishlist/(?:index/(?:index/)?)?(?:wishlist_id/\d+/)?")
def wishlist():
    if g.cfg.get("wishlist/general/active", "1") == "0":
        return front_page("404 Not Found", "<p>Whoops, our bad...</p>", 404)
    need = require_customer()
    if need:
        return need
    rows = q(g.conn, "SELECT i.product_id FROM wishlist w JOIN wishlist_item i USING (wishlist_id) WHERE w.customer_id=%s ORDER BY i.wishlist_item_id",
             (customer()["entity_id"],))
    cards = "".join(product_card(mage.product(g.conn, r["product_id"])) for r in rows) or '<div class="message info empty"><span>You have no items in your wish list.</span></div>'
    return front_page("My Wish List", '<form class="form-wishlist-items" id="wishlist-view-form"><div class="products-grid wishlist"><ol class="product-items">%s</ol></div></form>' % cards,
                      body_class="wishlist-index-index account")
