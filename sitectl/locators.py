"""Evaluator locators: WebArena's helper functions, and direct reads of the sites' state.

Two families:

* **WebArena's helpers**, same names, arguments and return values as
  ``evaluation_harness/helper_functions.py`` (WebArena; research/webarena-official.md §4.5)
  and the REST-based ones of VisualWebArena: ``shopping_get_auth_token``,
  ``shopping_get_latest_order_url``, ``shopping_get_sku_latest_review_author``,
  ``…_rating``, ``…_text``, ``…_title``, ``shopping_get_sku_product_page_url``,
  ``reddit_get_post_url``, ``gitlab_get_project_memeber_role`` (sic). They call the same
  endpoints. Module-level functions read the site URLs from the environment variables WebArena
  reads (``SHOPPING``, …; ``sitectl env`` prints them), so a harness switches with one import::

      # from evaluation_harness.helper_functions import shopping_get_latest_order_url
      from sitectl.locators import shopping_get_latest_order_url

  Where WebArena's helper is wrong, ours is right (see each docstring): the latest order's
  URL uses the order's entity id, not its increment id; "latest" breaks ties by id.

* **Direct state**: ``shopping_latest_order``, ``shopping_product``,
  ``shopping_latest_review``, ``gitlab_project_member_roles``, ``reddit_post`` read the site's
  database (through the same SQL sessions the state stores use), so an evaluator can check
  state without a browser or a page.

All HTTP goes through :func:`sitectl.http.new_session` (``*.localhost`` names reach loopback).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from urllib.parse import quote, urlparse, urlsplit

from sitectl import http
from sitectl.errors import LocatorError, SitectlError, UsageError
from sitectl.stack import Account
from sitectl.stack.target import PORT_STEP, resolve_target
from sitectl.stores import sql_session_of
from sitectl.stores.literals import m_value, pg_value, q_ident

#: GitLab's access levels (``Gitlab::Access``; contract-postmill-gitlab-map.md §GitLab).
GITLAB_ROLES = {5: "Minimal Access", 10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}
#: WebArena's environment variable per site key (``browser_env/env_config.py``).
ENV_VARS = {"shopping": "SHOPPING", "shopping_admin": "SHOPPING_ADMIN", "reddit": "REDDIT", "gitlab": "GITLAB",
            "map": "MAP", "wikipedia": "WIKIPEDIA", "homepage": "HOMEPAGE"}
#: WebArena's ``ACCOUNTS["shopping_site_admin"]`` (env_config.py), used when no stack is given.
WEBARENA_SHOP_ADMIN = Account(username="admin", password="admin1234")
TIMEOUT = 30.0


@dataclass
class Locators:
    """The locators of one set of sites.

    Args:
        urls: base URL per site key (``{"shopping": "http://127.0.0.1:7770", ...}``), as
            WebArena's variables hold them (no trailing slash).
        shop_admin: the Magento admin account whose REST token the shopping helpers use
            (WebArena: ``shopping_site_admin``, admin/admin1234).
        target: the :class:`sitectl.stack.target.Target` whose databases the direct-state reads
            query; None leaves only the HTTP helpers usable.
    """

    urls: dict[str, str]
    shop_admin: Account = WEBARENA_SHOP_ADMIN
    target: object | None = None
    no_target_reason: str = "use Locators.for_target(target)"

    @classmethod
    def for_target(cls, target) -> "Locators":
        """Locators of a running stack: its URLs, its shop admin account, its databases."""
        urls = {n: target.url(s) for n, s in target.stack.sites.items()}
        return cls(urls=urls, shop_admin=_shop_admin(target), target=target)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Locators":
        """Locators from WebArena's environment variables (``SHOPPING`` …), as its
        ``env_config.py`` reads them; the databases are those of the stack sitectl resolves
        from its config file (``sitectl.yaml``) or defaults."""
        env = os.environ if environ is None else environ
        urls = {k: env[v].rstrip("/") for k, v in ENV_VARS.items() if env.get(v)}
        target, why = _target_for_urls(urls, env.get("SITECTL_INSTANCE"))
        loc = cls(urls=urls, target=target)
        loc.no_target_reason = why
        if target is not None and "shopping" in target.stack.sites:
            loc.shop_admin = _shop_admin(target)
        return loc

    # -- plumbing ---------------------------------------------------------------------------
    def _url(self, site: str) -> str:
        try:
            return self.urls[site]
        except KeyError:
            raise UsageError(f"no URL for site {site!r}: set {ENV_VARS.get(site, site.upper())} "
                             "(`sitectl env` prints it)") from None

    def _rest(self, method: str, path: str, token: str | None = None, **kw):
        url = f"{self._url('shopping')}/rest{path}"
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        r = http.new_session().request(method, url, headers=headers, timeout=TIMEOUT, **kw)
        if r.status_code != 200:
            raise LocatorError(f"shopping: {method} {url}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json()

    # -- WebArena's helpers (evaluation_harness/helper_functions.py) ----------------------
    def shopping_get_auth_token(self) -> str:
        """An admin REST token of the storefront's Magento: ``POST {SHOPPING}/rest/default/V1/
        integration/admin/token`` with the shop admin account (WebArena's helper, same call).

        Raises:
            LocatorError: the site refused (WebArena would return the error body as a token).
        """
        return self._rest("POST", "/default/V1/integration/admin/token",
                          data=json.dumps({"username": self.shop_admin.username, "password": self.shop_admin.password}))

    def shopping_get_latest_order_url(self) -> str:
        """URL of the latest order's page: ``{SHOPPING}/sales/order/view/order_id/<entity_id>/``.

        Same REST call as WebArena (orders sorted by ``created_at`` descending, one item), with
        two fixes: the URL takes the order's ``entity_id`` (WebArena takes
        ``int(increment_id)``, which names another order, or none, as soon as the two differ:
        Magento's order sequence also advances on failed placements, contract-magento.md), and
        ties on ``created_at`` (one-second resolution) go to the higher ``entity_id``.

        Raises:
            LocatorError: the site answered an error, or there is no order.
        """
        token = self.shopping_get_auth_token()
        params = {"searchCriteria[sortOrders][0][field]": "created_at",
                  "searchCriteria[sortOrders][0][direction]": "DESC",
                  "searchCriteria[sortOrders][1][field]": "entity_id",
                  "searchCriteria[sortOrders][1][direction]": "DESC",
                  "searchCriteria[pageSize]": "1"}
        items = self._rest("GET", "/V1/orders", token, params=params).get("items") or []
        if not items:
            raise LocatorError("shopping: there is no order")
        return f"{self._url('shopping')}/sales/order/view/order_id/{int(items[0]['entity_id'])}/"

    def _latest_review(self, sku: str) -> dict | None:
        token = self.shopping_get_auth_token()
        reviews = self._rest("GET", f"/V1/products/{quote(sku, safe='')}/reviews", token)
        return max(reviews, key=lambda r: int(r["id"])) if reviews else None

    def shopping_get_sku_latest_review_author(self, sku: str) -> str:
        """Nickname of the product's latest review, ``""`` when it has none (WebArena's helper:
        ``GET {SHOPPING}/rest/V1/products/{sku}/reviews``, the last item). "Latest" is the
        highest review id, which is the endpoint's last item. The SKU is URL-quoted (WebArena
        pastes it raw, which breaks on SKUs with ``/`` or ``#``)."""
        r = self._latest_review(sku)
        return r["nickname"] if r else ""

    def shopping_get_sku_latest_review_rating(self, sku: str) -> str:
        """The latest review's "Rating" vote as a percent string (``"80"``), ``""`` when the
        product has no review. WebArena's helper reads the first vote of the last review after
        asserting the first review's first vote is named "Rating"; this one reads the vote
        named "Rating" of the latest review, and gives ``""`` when that review has none (where
        WebArena's raises)."""
        r = self._latest_review(sku)
        if not r:
            return ""
        votes = [v for v in r.get("ratings", []) if v.get("rating_name") == "Rating"]
        return str(votes[0]["percent"]) if votes else ""

    def shopping_get_sku_latest_review_text(self, sku: str) -> str:
        """The latest review's text (``detail``), ``""`` if none (VisualWebArena's helper)."""
        r = self._latest_review(sku)
        return r["detail"] if r else ""

    def shopping_get_sku_latest_review_title(self, sku: str) -> str:
        """The latest review's title, ``""`` if none (VisualWebArena's helper)."""
        r = self._latest_review(sku)
        return r["title"] if r else ""

    def shopping_get_sku_product_page_url(self, sku: str) -> str:
        """``{SHOPPING}/<url_key>.html`` of the product (VisualWebArena's helper: ``GET
        /rest/V1/products/{sku}``, custom attribute ``url_key``); ``""`` if it has no url_key.

        Raises:
            LocatorError: no such product (HTTP 404).
        """
        p = self._rest("GET", f"/V1/products/{quote(sku, safe='')}", self.shopping_get_auth_token())
        key = next((a["value"] for a in p.get("custom_attributes", []) if a.get("attribute_code") == "url_key"), "")
        return f"{self._url('shopping')}/{key}.html" if key else ""

    @staticmethod
    def reddit_get_post_url(url: str) -> str:
        """``scheme://netloc/f/<forum>/<post_id>/`` of a post or comment URL; any other URL as
        given (WebArena's helper: a pure URL transform)."""
        u = urlparse(url)
        parts = u.path.split("/")
        if len(parts) < 4 or parts[1] != "f":
            return url
        return f"{u.scheme}://{u.netloc}/f/{parts[2]}/{parts[3]}/"

    @staticmethod
    def gitlab_get_project_memeber_role(page, account_name: str) -> str:
        """The "Max role" shown for ``@account_name`` on the project members page open in
        ``page`` (a Playwright page), ``""`` when it is not listed or the page fails. Same
        selectors as WebArena's helper (``td[data-label='Account']
        span.gl-avatar-labeled-sublabel``, ``td.col-max-role span``); the account name is
        passed to the page as an argument, not pasted into the script."""
        try:
            return page.evaluate(
                """(name) => {
                    const subs = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
                    const i = subs.findIndex(e => e.outerText === '@' + name);
                    return i < 0 ? '' : document.querySelectorAll("td.col-max-role span")[i].outerText;
                }""", account_name) or ""
        except Exception:  # noqa: BLE001 - WebArena's contract: any failure reads as ""
            return ""

    # -- direct state ------------------------------------------------------------------------
    def _rows(self, site: str, sql: str, what: str) -> list:
        """Rows of a one-column JSON query against ``site``'s first SQL store."""
        if self.target is None:
            raise UsageError(f"direct-state locators need the instance the URLs belong to: {self.no_target_reason}")
        from sitectl.engine import DockerEngine  # noqa: PLC0415 - python-on-whales only for direct-state reads

        t = self.target
        s = t.stack.sites.get(site)
        found = sql_session_of(s, t.container(s), DockerEngine()) if s is not None else None
        if found is None:
            raise UsageError(f"site {site!r} has no SQL store in stack {t.stack.name!r}")
        sess, database = found
        if sess.dialect == "mysql":  # the stores name tables with their schema; these queries do not
            sql = f"USE {q_ident(database)};\n{sql}"
        try:
            rows = sess.query(sql, what)
        except SitectlError as e:
            raise LocatorError(f"{site}: {what}: {e}") from None
        try:
            return json.loads(rows[0][0]) if rows and rows[0] and rows[0][0] else []
        except ValueError as e:
            raise LocatorError(f"{site}: {what}: unreadable answer from the database: {e}") from None

    def _shop_literal(self, v: str) -> str:
        return m_value(v)

    def shopping_latest_order(self, customer_email: str | None = None) -> dict | None:
        """The latest order in the storefront's database, of one customer or of anyone:
        ``{"entity_id", "increment_id", "customer_email", "status", "grand_total" (float),
        "created_at", "url"}``, or None. Latest = ``created_at`` then ``entity_id``, highest."""
        where = f"WHERE customer_email = {self._shop_literal(customer_email)}" if customer_email else ""
        rows = self._rows("shopping", f"""
            SELECT JSON_ARRAYAGG(JSON_OBJECT('entity_id', entity_id, 'increment_id', increment_id,
                   'customer_email', customer_email, 'status', status, 'grand_total', grand_total,
                   'created_at', DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s')))
            FROM (SELECT * FROM sales_order {where} ORDER BY created_at DESC, entity_id DESC LIMIT 1) o""",
                          "latest order")
        if not rows:
            return None
        o = rows[0]
        o["grand_total"] = float(o["grand_total"]) if o["grand_total"] is not None else None
        o["url"] = f"{self._url('shopping')}/sales/order/view/order_id/{o['entity_id']}/"
        return o

    def shopping_product(self, sku: str) -> dict | None:
        """A product's current state in the storefront's database: ``{"entity_id", "sku",
        "name", "price" (float), "qty" (float), "is_in_stock" (bool)}`` (store-level 0 values,
        attributes looked up by code in ``eav_attribute``), or None if there is no such SKU."""
        def attr(code: str, table: str) -> str:
            return (f"(SELECT v.value FROM catalog_product_entity_{table} v JOIN eav_attribute a ON a.attribute_id = v.attribute_id "
                    f"AND a.entity_type_id = 4 AND a.attribute_code = '{code}' WHERE v.entity_id = e.entity_id AND v.store_id = 0 LIMIT 1)")
        rows = self._rows("shopping", f"""
            SELECT JSON_ARRAYAGG(JSON_OBJECT('entity_id', e.entity_id, 'sku', e.sku, 'name', {attr('name', 'varchar')},
                   'price', {attr('price', 'decimal')}, 'qty', s.qty, 'is_in_stock', s.is_in_stock))
            FROM catalog_product_entity e LEFT JOIN cataloginventory_stock_item s ON s.product_id = e.entity_id
                 AND s.stock_id = 1
            WHERE e.sku = {self._shop_literal(sku)}""", "product")
        if not rows:
            return None
        p = rows[0]
        p["price"] = float(p["price"]) if p["price"] is not None else None
        p["qty"] = float(p["qty"]) if p["qty"] is not None else None
        p["is_in_stock"] = bool(p["is_in_stock"])
        return p

    def shopping_latest_review(self, sku: str) -> dict | None:
        """The product's latest review in the database (highest review id, any status):
        ``{"review_id", "nickname", "title", "detail", "status_id", "rating"}`` (``rating``: the
        percent of its "Rating" vote, or None), or None."""
        rows = self._rows("shopping", f"""
            SELECT JSON_ARRAYAGG(JSON_OBJECT('review_id', r.review_id, 'nickname', d.nickname, 'title', d.title,
                   'detail', d.detail, 'status_id', r.status_id,
                   'rating', (SELECT v.percent FROM rating_option_vote v JOIN rating ra ON ra.rating_id = v.rating_id
                              WHERE v.review_id = r.review_id AND ra.rating_code = 'Rating' LIMIT 1)))
            FROM (SELECT r.* FROM review r JOIN catalog_product_entity e ON e.entity_id = r.entity_pk_value
                  WHERE e.sku = {self._shop_literal(sku)} ORDER BY r.review_id DESC LIMIT 1) r
            JOIN review_detail d ON d.review_id = r.review_id""", "latest review")
        return rows[0] if rows else None

    def gitlab_project_member_roles(self, project_path: str) -> dict[str, str]:
        """``{username: role}`` of a project (``"byteblaze/a11y-syntax-highlighting"``), the
        "Max role" its members page shows: the highest of the direct project membership and
        the memberships of its namespace and that namespace's ancestors; a personal project's
        owner is "Owner" unless listed otherwise. Pending access requests are left out.

        Raises:
            LocatorError: no such project.
        """
        path = pg_value(project_path.strip("/"))
        rows = self._rows("gitlab", f"""
            WITH p AS (SELECT pr.id, pr.namespace_id FROM projects pr JOIN routes r ON r.source_type = 'Project'
                       AND r.source_id = pr.id WHERE lower(r.path) = lower({path})),
            m AS (SELECT m.user_id, m.access_level FROM members m, p WHERE m.source_type = 'Project'
                    AND m.source_id = p.id AND m.requested_at IS NULL AND m.user_id IS NOT NULL
                  UNION ALL
                  SELECT m.user_id, m.access_level FROM members m, p, namespaces n WHERE n.id = p.namespace_id
                    AND m.source_type = 'Namespace' AND (m.source_id = n.id OR m.source_id = ANY(n.traversal_ids))
                    AND m.requested_at IS NULL AND m.user_id IS NOT NULL),
            o AS (SELECT n.owner_id AS user_id, 50 AS access_level FROM namespaces n, p WHERE n.id = p.namespace_id
                    AND n.type = 'User' AND NOT EXISTS (SELECT 1 FROM m WHERE m.user_id = n.owner_id))
            SELECT jsonb_build_array((SELECT count(*) FROM p),
                   (SELECT coalesce(jsonb_object_agg(u.username, x.lvl), '{{}}'::jsonb)
                    FROM (SELECT user_id, max(access_level) AS lvl FROM (SELECT * FROM m UNION ALL SELECT * FROM o) a
                          GROUP BY user_id) x JOIN users u ON u.id = x.user_id))""", "project members")
        found, levels = rows
        if not found:
            raise LocatorError(f"gitlab: no project {project_path!r}")
        return {u: GITLAB_ROLES.get(int(lvl), str(lvl)) for u, lvl in sorted(levels.items())}

    def reddit_post(self, post_id: int) -> dict | None:
        """A forum post with its votes and comments, from the forum's database:
        ``{"id", "forum", "title", "author", "url", "body", "net_score", "upvotes",
        "downvotes", "comment_count", "comments": [{"id", "author", "parent_id", "body",
        "net_score", "visibility", "upvotes", "downvotes"}]}`` (comments by id), or None."""
        pid = int(post_id)
        rows = self._rows("reddit", f"""
            SELECT jsonb_build_array(jsonb_build_object(
                'id', s.id, 'forum', f.name, 'title', s.title, 'author', u.username, 'url', s.url, 'body', s.body,
                'net_score', s.net_score, 'comment_count', s.comment_count,
                'upvotes', (SELECT count(*) FROM submission_votes v WHERE v.submission_id = s.id AND v.upvote),
                'downvotes', (SELECT count(*) FROM submission_votes v WHERE v.submission_id = s.id AND NOT v.upvote),
                'comments', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'id', c.id, 'author', cu.username, 'parent_id', c.parent_id, 'body', c.body,
                    'net_score', c.net_score, 'visibility', c.visibility,
                    'upvotes', (SELECT count(*) FROM comment_votes v WHERE v.comment_id = c.id AND v.upvote),
                    'downvotes', (SELECT count(*) FROM comment_votes v WHERE v.comment_id = c.id AND NOT v.upvote))
                    ORDER BY c.id), '[]'::jsonb)
                    FROM comments c JOIN users cu ON cu.id = c.user_id WHERE c.submission_id = s.id)))
            FROM submissions s JOIN forums f ON f.id = s.forum_id JOIN users u ON u.id = s.user_id
            WHERE s.id = {pid}""", "post")
        return rows[0] if rows else None


def _shop_admin(target) -> Account:
    """The account whose admin token the storefront helpers use: the shop's ``site_admin``
    role (WebArena's ``shopping_site_admin``), else the admin site's default, else WebArena's."""
    for name, role in (("shopping", "site_admin"), ("shopping_admin", "default")):
        s = target.stack.sites.get(name)
        if s is not None and role in s.accounts:
            return s.account(role)
    return WEBARENA_SHOP_ADMIN


def _target_for_urls(urls: dict[str, str], instance: str | None):
    """The running instance whose base URLs are ``urls`` (the stack sitectl resolves from its
    config file or defaults): instance ``SITECTL_INSTANCE`` when set, else the one the
    shop's, forum's or GitLab's port names (declared port + 100 x N). Returns (target, None),
    or (None, why) when there is none or its URLs differ from ``urls``."""

    try:
        base = resolve_target()
        if instance is not None:
            n = int(instance)
        else:
            n = None
            for key in ("shopping", "reddit", "gitlab", "shopping_admin"):
                site = base.stack.sites.get(key)
                if site is not None and key in urls:
                    port = urlsplit(urls[key]).port or 80
                    off = port - site.host_ports[0]
                    if off >= 0 and off % PORT_STEP == 0:
                        n = off // PORT_STEP
                        break
            if n is None:
                return None, "no site URL in the environment names a port of the stack (set SITECTL_INSTANCE)"
        from sitectl.engine import DockerEngine  # noqa: PLC0415 - python-on-whales only when an instance is resolved
        from sitectl.engine.recorded import running_target  # noqa: PLC0415 - see above

        target = running_target(DockerEngine(), instance=n)
    except (SitectlError, ValueError) as e:
        return None, f"cannot resolve the instance: {e}"
    wrong = [f"{k}: {urls[k]} (instance {target.instance} has {target.url(target.stack.sites[k])})"
             for k in urls if k in target.stack.sites and target.url(target.stack.sites[k]) != urls[k]]
    if wrong:
        return None, "the environment's URLs are not this stack's: " + "; ".join(wrong)
    return target, None


# -- module-level helpers: WebArena's names, URLs from WebArena's environment variables ------
def _env() -> Locators:
    return Locators.from_env()


def shopping_get_auth_token() -> str:
    """:meth:`Locators.shopping_get_auth_token` with the URLs of the environment."""
    return _env().shopping_get_auth_token()


def shopping_get_latest_order_url() -> str:
    """:meth:`Locators.shopping_get_latest_order_url` with the URLs of the environment."""
    return _env().shopping_get_latest_order_url()


def shopping_get_sku_latest_review_author(sku: str) -> str:
    """:meth:`Locators.shopping_get_sku_latest_review_author` with the URLs of the environment."""
    return _env().shopping_get_sku_latest_review_author(sku)


def shopping_get_sku_latest_review_rating(sku: str) -> str:
    """:meth:`Locators.shopping_get_sku_latest_review_rating` with the URLs of the environment."""
    return _env().shopping_get_sku_latest_review_rating(sku)


def shopping_get_sku_latest_review_text(sku: str) -> str:
    """:meth:`Locators.shopping_get_sku_latest_review_text` with the URLs of the environment."""
    return _env().shopping_get_sku_latest_review_text(sku)


def shopping_get_sku_latest_review_title(sku: str) -> str:
    """:meth:`Locators.shopping_get_sku_latest_review_title` with the URLs of the environment."""
    return _env().shopping_get_sku_latest_review_title(sku)


def shopping_get_sku_product_page_url(sku: str) -> str:
    """:meth:`Locators.shopping_get_sku_product_page_url` with the URLs of the environment."""
    return _env().shopping_get_sku_product_page_url(sku)


reddit_get_post_url = Locators.reddit_get_post_url
gitlab_get_project_memeber_role = Locators.gitlab_get_project_memeber_role
