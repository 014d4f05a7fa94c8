"""Request plumbing shared by every area: base URL and redirects, sessions as files in var/session (Sess), form
keys, flash messages, prices."""
import html
from datetime import datetime

from flask import g, request, redirect as flask_redirect

import mage

E = html.escape
SIGNIN_FAIL = ("The account sign-in was incorrect or your account is disabled temporarily. "
               "Please wait and try again later.")


def now_s():
    return datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")


def base_url():
    return g.cfg.get("web/unsecure/base_url") or "http://localhost/"


def abs_url(path):
    return base_url().rstrip("/") + path


def redirect(path, code=302):
    r = flask_redirect(path if "://" in path else abs_url(path), code)
    return r


# ---------------------------------------------------------------- sessions ------------
class Sess(dict):
    def __init__(self, cookie, path):
        self.cookie, self.path, self.dirty, self.regen = cookie, path, False, False
        self.sid = request.cookies.get(cookie)
        # The session's file stays locked until close() (the end of the request), as PHP's.
        self.fd, data = mage.session_open(self.sid)
        if data is None:
            self.sid, data = None, {}
        super().__init__(data)

    def __setitem__(self, k, v):
        self.dirty = True
        super().__setitem__(k, v)

    def pop(self, k, d=None):
        self.dirty = True
        return super().pop(k, d)

    def form_key(self):
        if "_form_key" not in self:
            self["_form_key"] = mage.new_form_key()
        return self["_form_key"]

    def flash(self, kind, text):
        self["_messages"] = self.get("_messages", []) + [[kind, text]]

    def take_messages(self):
        m = self.get("_messages", [])
        if m:
            self.pop("_messages")
        return m

    def regenerate(self):
        if self.sid:
            mage.session_delete(self.sid)
        self.close()
        self.sid, self.dirty = None, True

    def save(self, resp):
        if not self.dirty:
            if self.fd is not None:
                mage.session_touch(self.fd)
            return
        if self.fd is not None:
            mage.session_write(self.fd, dict(self))
        else:
            self.sid = mage.new_id()
            mage.session_create(self.sid, dict(self))
        resp.set_cookie(self.cookie, self.sid, path=self.path, httponly=True, samesite="Lax")

    def close(self):
        if self.fd is not None:
            mage.session_close(self.fd)
            self.fd = None


def form_key_ok():
    sent = request.form.get("form_key", "")
    return bool(sent) and sent == g.sess.form_key()


def messages_html():
    out = []
    for kind, text in g.sess.take_messages():
        out.append('<div class="message-%s %s message" data-ui-id="message-%s"><div>%s</div></div>' % (kind, kind, kind, E(text)))
    return '<div class="page messages"><div class="messages">%s</div></div>' % "".join(out) if out else ""


def price_html(v):
    return '<span class="price-wrapper" data-price-amount="%s" data-price-type="finalPrice"><span class="price">$%s</span></span>' % (v, "{:,.2f}".format(v))
