"""REST API v4 subset of the GitLab replica (contract-postmill-gitlab-map.md §2.3).

Auth: PRIVATE-TOKEN header / private_token query, Authorization: Bearer / access_token query
(personal access tokens), or the _gitlab_session cookie (non-GET needs X-CSRF-Token).
Pagination: page/per_page (default 20, max 100) with X-Total, X-Total-Pages, X-Page,
X-Per-Page, X-Next-Page, X-Prev-Page and Link headers.
"""
import datetime as dt, json, math, urllib.parse

from flask import Blueprint, Response, g, request

from . import core
from .core import q, x
from .records import (add_member, add_note, create_issue, create_mr, create_project, find_user, list_issuables, set_labels,
                      visible_projects)

bp = Blueprint("api", __name__)

ISSUE_STATE = {1: "opened", 2: "closed", 3: "merged", 4: "locked"}


def js(obj, status=200, headers=None):
    return Response(json.dumps(obj, default=_default), status, {"Content-Type": "application/json", **(headers or {})})


def _default(o):
    if isinstance(o, dt.datetime):
        return o.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{o.microsecond // 1000:03d}Z"
    if isinstance(o, dt.date):
        return o.isoformat()
    raise TypeError(type(o))


def err(status, message):
    return js({"message": message}, status)


def api_user():
    tok = request.headers.get("PRIVATE-TOKEN") or request.args.get("private_token") or request.args.get("access_token")
    auth = request.headers.get("Authorization", "")
    if not tok and auth.lower().startswith("bearer "):
        tok = auth[7:].strip()
    if tok:
        u = core.token_user(tok)
        return u if u else False
    if request.cookies.get(core.SESSION_COOKIE):
        core.load_session()
        u = core.session_user()
        if u and request.method not in ("GET", "HEAD") and not core.csrf_ok():
            return None
        return u
    return None


def api(rule, methods=("GET",), auth=False):
    def deco(fn):
        def view(**kw):
            u = api_user()
            if u is False or (auth and not u):
                return err(401, "401 Unauthorized")
            g.user = u or None
            return fn(**kw)
        view.__name__ = "api_" + fn.__name__ + ":" + rule + ":" + ",".join(methods)
        bp.add_url_rule("/api/v4" + rule, view.__name__, view, methods=list(methods))
        return fn
    return deco


def paginate(items):
    try:
        page = max(1, int(request.args.get("page", 1)))
        per = min(100, max(1, int(request.args.get("per_page", 20))))
    except ValueError:
        page, per = 1, 20
    total = len(items)
    pages = max(1, math.ceil(total / per))
    h = {"X-Total": str(total), "X-Total-Pages": str(pages), "X-Page": str(page), "X-Per-Page": str(per),
         "X-Next-Page": str(page + 1) if page < pages else "", "X-Prev-Page": str(page - 1) if page > 1 else ""}
    base = request.base_url
    args = {k: v for k, v in request.args.items()}
    links = []
    for rel, pg in (("prev", page - 1 if page > 1 else None), ("next", page + 1 if page < pages else None), ("first", 1), ("last", pages)):
        if pg:
            args.update(page=pg, per_page=per)
            links.append(f'<{base}?{urllib.parse.urlencode(args)}>; rel="{rel}"')
    h["Link"] = ", ".join(links)
    return items[(page - 1) * per: page * per], h


def web(path):
    return f"{core.external_url()}/{path}"


# ------------------------------------------------------------------ entities
def user_basic(u):
    if not u:
        return None
    return {"id": u["id"], "username": u["username"], "name": u["name"], "state": u["state"],
            "avatar_url": None, "web_url": web(u["username"])}


def user_full(u):
    d = user_basic(u)
    d.update({"created_at": u["created_at"], "bio": u["bio"] or "", "location": u["location"] or "",
              "website_url": u["website_url"] or "", "public_email": "", "organization": "", "job_title": ""})
    if g.user and (g.user["id"] == u["id"] or g.user["admin"]):
        d.update({"email": u["email"], "is_admin": u["admin"], "last_sign_in_at": u["last_sign_in_at"],
                  "confirmed_at": u["confirmed_at"], "current_sign_in_at": u["current_sign_in_at"]})
    return d


def users_by_id(ids):
    return {u["id"]: u for u in q("SELECT * FROM users WHERE id = ANY(%s)", (list(ids) or [0],))}


def project_entity(p, simple=False):
    ns = q("SELECT * FROM namespaces WHERE id=%s", (p["namespace_id"],), one=True)
    c = core.conf()["gitlab"]
    ssh = f"ssh://git@{c['ssh_host']}:{c['ssh_port']}/{p['full_path']}.git" if c["ssh_port"] != 22 else f"git@{c['ssh_host']}:{p['full_path']}.git"
    d = {"id": p["id"], "description": p["description"], "name": p["name"],
         "name_with_namespace": f"{ns['name']} / {p['name']}", "path": p["path"], "path_with_namespace": p["full_path"],
         "created_at": p["created_at"], "default_branch": core.head_branch_if_any(p["id"]),
         "tag_list": [], "topics": [], "ssh_url_to_repo": ssh, "http_url_to_repo": web(p["full_path"] + ".git"),
         "web_url": web(p["full_path"]), "readme_url": None, "avatar_url": None, "forks_count": 0,
         "star_count": p["star_count"], "last_activity_at": p["last_activity_at"],
         "namespace": {"id": ns["id"], "name": ns["name"], "path": ns["path"], "kind": ns["type"].lower(),
                       "full_path": ns["path"], "parent_id": ns["parent_id"], "avatar_url": None, "web_url": web(ns["path"])}}
    if simple:
        return d
    d.update({"visibility": core.VIS[p["visibility_level"]], "archived": p["archived"], "creator_id": p["creator_id"],
              "open_issues_count": q("SELECT count(*) AS n FROM issues WHERE project_id=%s AND state_id=1", (p["id"],), one=True)["n"],
              "issues_enabled": True, "merge_requests_enabled": True, "empty_repo": d["default_branch"] is None,
              "_links": {"self": f"{core.external_url()}/api/v4/projects/{p['id']}"}})
    if g.user:
        lvl = core.access_level(g.user, p)
        d["permissions"] = {"project_access": {"access_level": lvl, "notification_level": 3} if lvl else None,
                            "group_access": None}
    return d


def member_entity(m):
    u = q("SELECT * FROM users WHERE id=%s", (m["user_id"],), one=True)
    d = user_basic(u)
    d.update({"access_level": m["access_level"], "created_at": m.get("created_at"), "expires_at": m.get("expires_at"),
              "membership_state": "active"})
    return d


def issue_entity(i, p):
    ids = [r["user_id"] for r in q("SELECT user_id FROM issue_assignees WHERE issue_id=%s", (i["id"],))]
    us = users_by_id(ids + [i["author_id"]] + ([i["closed_by_id"]] if i["closed_by_id"] else []))
    labels = [r["title"] for r in q("SELECT l.title FROM label_links ll JOIN labels l ON l.id=ll.label_id WHERE ll.target_type='Issue' AND ll.target_id=%s ORDER BY l.title", (i["id"],))]
    ms = q("SELECT * FROM milestones WHERE id=%s", (i["milestone_id"],), one=True) if i["milestone_id"] else None
    n = q("SELECT count(*) AS n FROM notes WHERE noteable_type='Issue' AND noteable_id=%s AND NOT system", (i["id"],), one=True)["n"]
    assignees = [user_basic(us[a]) for a in ids if a in us]
    return {"id": i["id"], "iid": i["iid"], "project_id": i["project_id"], "title": i["title"], "description": i["description"],
            "state": ISSUE_STATE[i["state_id"]], "created_at": i["created_at"], "updated_at": i["updated_at"], "closed_at": i["closed_at"],
            "closed_by": user_basic(us.get(i["closed_by_id"])), "labels": labels, "milestone": milestone_entity(ms) if ms else None,
            "assignees": assignees, "assignee": assignees[0] if assignees else None, "author": user_basic(us.get(i["author_id"])),
            "type": "ISSUE", "user_notes_count": n, "due_date": i["due_date"], "confidential": i["confidential"],
            "web_url": web(f"{p['full_path']}/-/issues/{i['iid']}"), "references": {"short": f"#{i['iid']}", "full": f"{p['full_path']}#{i['iid']}"}}


def mr_entity(m, p):
    a_ids = [r["user_id"] for r in q("SELECT user_id FROM merge_request_assignees WHERE merge_request_id=%s", (m["id"],))]
    r_ids = [r["user_id"] for r in q("SELECT user_id FROM merge_request_reviewers WHERE merge_request_id=%s", (m["id"],))]
    met = q("SELECT * FROM merge_request_metrics WHERE merge_request_id=%s", (m["id"],), one=True) or {}
    us = users_by_id(a_ids + r_ids + [m["author_id"]] + ([met["merged_by_id"]] if met.get("merged_by_id") else []))
    labels = [r["title"] for r in q("SELECT l.title FROM label_links ll JOIN labels l ON l.id=ll.label_id WHERE ll.target_type='MergeRequest' AND ll.target_id=%s ORDER BY l.title", (m["id"],))]
    assignees = [user_basic(us[a]) for a in a_ids if a in us]
    merged_by = user_basic(us.get(met.get("merged_by_id")))
    return {"id": m["id"], "iid": m["iid"], "project_id": m["target_project_id"], "title": m["title"], "description": m["description"],
            "state": ISSUE_STATE[m["state_id"]], "created_at": m["created_at"], "updated_at": m["updated_at"],
            "merged_by": merged_by, "merge_user": merged_by, "merged_at": met.get("merged_at"),
            "target_branch": m["target_branch"], "source_branch": m["source_branch"],
            "source_project_id": m["source_project_id"], "target_project_id": m["target_project_id"],
            "author": user_basic(us.get(m["author_id"])), "assignees": assignees, "assignee": assignees[0] if assignees else None,
            "reviewers": [user_basic(us[r]) for r in r_ids if r in us], "labels": labels, "draft": m["draft"],
            "work_in_progress": m["draft"], "merge_status": m["merge_status"], "detailed_merge_status": "mergeable",
            "web_url": web(f"{p['full_path']}/-/merge_requests/{m['iid']}"),
            "references": {"short": f"!{m['iid']}", "full": f"{p['full_path']}!{m['iid']}"}}


def milestone_entity(m):
    return {"id": m["id"], "iid": m["iid"], "project_id": m["project_id"], "title": m["title"], "description": m["description"],
            "state": m["state"], "start_date": m["start_date"], "due_date": m["due_date"], "created_at": m["created_at"]}


def note_entity(n):
    u = q("SELECT * FROM users WHERE id=%s", (n["author_id"],), one=True)
    return {"id": n["id"], "type": n["type"], "body": n["note"], "author": user_basic(u), "created_at": n["created_at"],
            "updated_at": n["updated_at"], "system": n["system"], "noteable_id": n["noteable_id"],
            "noteable_type": n["noteable_type"], "project_id": n["project_id"], "resolvable": False}


# ------------------------------------------------------------------ lookup helpers
def find_project(pid):
    pid = urllib.parse.unquote(pid)
    p = core.project_by_id(int(pid)) if pid.isdigit() else core.project_by_path(pid)
    if not p or not core.can_read(g.user, p):
        return None
    return p


def body():
    if request.is_json:
        return request.get_json(silent=True) or {}
    return {**request.args.to_dict(), **request.form.to_dict()}


def as_ids(v):
    if v is None:
        return []
    if isinstance(v, list):
        return [int(i) for i in v if str(i).isdigit() and int(i) > 0]
    return [int(i) for i in str(v).split(",") if i.strip().isdigit() and int(i) > 0]


def as_labels(v):
    if not v:
        return []
    return v if isinstance(v, list) else [s.strip() for s in str(v).split(",") if s.strip()]


# ------------------------------------------------------------------ endpoints
@api("/version", auth=True)
def version():
    return js({"version": core.version(), "revision": "sitectlrep", "kas": {"enabled": False, "externalUrl": None, "version": None},
               "enterprise": False})


@api("/user", auth=True)
def current_user():
    return js(user_full(g.user))


@api("/users")
def users():
    a = request.args
    if a.get("username"):
        rows = q("SELECT * FROM users WHERE lower(username)=lower(%s)", (a["username"],))
    elif a.get("search"):
        s = "%" + a["search"] + "%"
        rows = q("SELECT * FROM users WHERE username ILIKE %s OR name ILIKE %s OR email ILIKE %s ORDER BY id", (s, s, s))
    else:
        if not g.user:
            return err(403, "403 Forbidden - Not authorized to access /api/v4/users")
        rows = q("SELECT * FROM users ORDER BY id DESC")
    page, h = paginate(rows)
    return js([user_basic(u) for u in page], headers=h)


@api("/users/<int:uid>")
def user(uid):
    u = q("SELECT * FROM users WHERE id=%s", (uid,), one=True)
    return js(user_full(u)) if u else err(404, "404 User Not Found")


@api("/users/<int:uid>/personal_access_tokens", methods=("POST",), auth=True)
def create_pat(uid):
    if not g.user["admin"]:
        return err(403, "403 Forbidden")
    b = body()
    if not b.get("name"):
        return js({"error": "name is missing"}, 400)
    scopes = b.get("scopes") or ["api"]
    scopes = scopes if isinstance(scopes, list) else [scopes]
    tok, row = core.new_token(uid, b["name"], scopes, b.get("expires_at"))
    return js({"id": row["id"], "name": row["name"], "revoked": False, "created_at": row["created_at"], "scopes": scopes,
               "user_id": uid, "active": True, "expires_at": row["expires_at"], "token": tok}, 201)


@api("/projects")
def projects():
    a = request.args
    extra, args = "", []
    if a.get("search"):
        extra += " AND (p.name ILIKE %s OR p.path ILIKE %s OR p.description ILIKE %s)"
        args += ["%" + a["search"] + "%"] * 3
    if a.get("visibility") in core.VIS_NUM:
        extra += " AND p.visibility_level=%s"
        args.append(core.VIS_NUM[a["visibility"]])
    if g.user and a.get("membership") in ("true", "1"):
        extra += " AND EXISTS (SELECT 1 FROM project_authorizations pa WHERE pa.project_id=p.id AND pa.user_id=%s)"
        args.append(g.user["id"])
    if g.user and a.get("owned") in ("true", "1"):
        extra += " AND (p.creator_id=%s OR EXISTS (SELECT 1 FROM namespaces n2 WHERE n2.id=p.namespace_id AND n2.owner_id=%s))"
        args += [g.user["id"], g.user["id"]]
    if g.user and a.get("starred") in ("true", "1"):
        extra += " AND p.id IN (SELECT project_id FROM users_star_projects WHERE user_id=%s)"
        args.append(g.user["id"])
    order_by = {"id": "p.id", "name": "p.name", "path": "p.path", "created_at": "p.created_at", "updated_at": "p.updated_at",
                "last_activity_at": "p.last_activity_at", "star_count": "p.star_count"}.get(a.get("order_by", "created_at"), "p.created_at")
    sort = "ASC" if a.get("sort") == "asc" else "DESC"
    rows = visible_projects(extra, args, order=f"{order_by} {sort}, p.id {sort}")
    page, h = paginate(rows)
    simple = a.get("simple") in ("true", "1")
    return js([project_entity(p, simple) for p in page], headers=h)


@api("/projects", methods=("POST",), auth=True)
def create_project_api():
    b = body()
    name = b.get("name") or b.get("path")
    if not name:
        return js({"error": "name is missing"}, 400)
    try:
        p = create_project(g.user, name, b.get("path"), int(b["namespace_id"]) if b.get("namespace_id") else None,
                           core.VIS_NUM.get(b.get("visibility", "private"), 0), b.get("description", ""),
                           str(b.get("initialize_with_readme", "")).lower() in ("true", "1"))
    except ValueError as e:
        return js({"message": {"path": [str(e)], "name": [str(e)]}}, 400)
    return js(project_entity(p), 201)


@api("/projects/<path:pid>")
def project(pid):
    p = find_project(pid)
    return js(project_entity(p)) if p else err(404, "404 Project Not Found")


# members --------------------------------------------------------------
def _project_or_404(pid):
    p = find_project(pid)
    if not p:
        return None, err(404, "404 Project Not Found")
    return p, None


@api("/projects/<pid>/members")
@api("/projects/<pid>/members/all")
def project_members(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    ms = core.project_members(p, inherited=request.path.endswith("/all"))
    if not request.path.endswith("/all"):
        ms = [m for m in ms if m["via"] == "direct"]
    if request.args.get("query"):
        s = request.args["query"].lower()
        ms = [m for m in ms if s in m["username"].lower() or s in (m["name"] or "").lower()]
    page, h = paginate(ms)
    return js([member_entity(m) for m in page], headers=h)


@api("/projects/<pid>/members/<int:uid>")
@api("/projects/<pid>/members/all/<int:uid>")
def project_member(pid, uid):
    p, e = _project_or_404(pid)
    if e:
        return e
    for m in core.project_members(p, inherited=True):
        if m["user_id"] == uid and ("/all/" in request.path or m["via"] == "direct"):
            return js(member_entity(m))
    return err(404, "404 Member Not Found")


@api("/projects/<pid>/members", methods=("POST",), auth=True)
def add_project_member(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 40):
        return err(403, "403 Forbidden")
    b = body()
    if not b.get("access_level"):
        return js({"error": "access_level is missing"}, 400)
    lvl = int(b["access_level"])
    targets = []
    for key in ("user_id", "username"):
        for v in str(b.get(key, "")).split(","):
            v = v.strip()
            if not v:
                continue
            u = q("SELECT * FROM users WHERE id=%s", (int(v),), one=True) if v.isdigit() and key == "user_id" else find_user(v)
            if not u:
                return err(404, "404 User Not Found")
            targets.append(u)
    if not targets:
        return js({"error": "user_id, username are missing, exactly one parameter must be provided"}, 400)
    if lvl not in core.ACCESS or lvl < 10:
        return js({"message": {"access_level": ["is not included in the list"]}}, 400)
    for u in targets:
        if q("SELECT 1 FROM members WHERE source_type='Project' AND source_id=%s AND user_id=%s", (p["id"], u["id"]), one=True):
            return err(409, "Member already exists")
        add_member("Project", p["id"], u, lvl, b.get("expires_at"), p["project_namespace_id"])
    m = [m for m in core.project_members(p, inherited=False) if m["user_id"] == targets[0]["id"]][0]
    return js(member_entity(m), 201)


@api("/projects/<pid>/invitations", methods=("POST",), auth=True)
def invite_project_members(pid):
    """What GitLab's "Invite members" modal posts (session cookie + X-CSRF-Token): user_id is a
    comma-separated id list (or email); answers {"status": "success"} or an error message map."""
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 40):
        return err(403, "403 Forbidden")
    b = body()
    if not b.get("access_level"):
        return js({"error": "access_level is missing"}, 400)
    lvl = int(b["access_level"])
    if lvl == 50 and not core.can_write(g.user, p, 50):
        return js({"status": "error", "message": "access_level: not allowed"}, 201)
    ids = [v.strip() for v in str(b.get("user_id", "")).split(",") if v.strip()]
    emails = [v.strip() for v in str(b.get("email", "")).split(",") if v.strip()]
    if not ids and not emails:
        return js({"error": "email, user_id are missing, at least one parameter must be provided"}, 400)
    errors = {}
    for v in ids:
        u = q("SELECT * FROM users WHERE id=%s", (int(v),), one=True) if v.isdigit() else find_user(v)
        if not u:
            errors[v] = "User not found"
            continue
        add_member("Project", p["id"], u, lvl, b.get("expires_at"), p["project_namespace_id"])
    for em in emails:
        u = q("SELECT * FROM users WHERE lower(email)=lower(%s)", (em,), one=True)
        if u:
            add_member("Project", p["id"], u, lvl, b.get("expires_at"), p["project_namespace_id"])
        else:
            errors[em] = "Invite email is invalid"
    return js({"status": "error", "message": errors} if errors else {"status": "success"}, 201)


@api("/application/settings", methods=("GET", "PUT"), auth=True)
def app_settings():
    if not g.user["admin"]:
        return err(403, "403 Forbidden")
    if request.method == "PUT":
        b = body()
        for k in ("throttle_protected_paths_enabled", "throttle_protected_paths_requests_per_period",
                  "throttle_protected_paths_period_in_seconds", "session_expire_delay", "signup_enabled"):
            if k in b:
                v = b[k]
                v = str(v).lower() in ("true", "1") if k.endswith(("enabled",)) else int(v)
                x(f"UPDATE application_settings SET {k}=%s, updated_at=now()", (v,))
    return js(q("SELECT * FROM application_settings ORDER BY id LIMIT 1", one=True))


@api("/projects/<pid>/members/<int:uid>", methods=("PUT",), auth=True)
def edit_project_member(pid, uid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 40):
        return err(403, "403 Forbidden")
    b = body()
    if not q("SELECT 1 FROM members WHERE source_type='Project' AND source_id=%s AND user_id=%s", (p["id"], uid), one=True):
        return err(404, "404 Member Not Found")
    x("UPDATE members SET access_level=%s, updated_at=now() WHERE source_type='Project' AND source_id=%s AND user_id=%s",
      (int(b.get("access_level", 10)), p["id"], uid))
    core.refresh_authorizations(p["id"])
    m = [m for m in core.project_members(p, inherited=False) if m["user_id"] == uid][0]
    return js(member_entity(m))


@api("/projects/<pid>/members/<int:uid>", methods=("DELETE",), auth=True)
def delete_project_member(pid, uid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 40):
        return err(403, "403 Forbidden")
    x("DELETE FROM members WHERE source_type='Project' AND source_id=%s AND user_id=%s", (p["id"], uid))
    core.refresh_authorizations(p["id"])
    return Response(status=204)


# issues ---------------------------------------------------------------
@api("/issues", auth=True)
@api("/merge_requests", auth=True)
def global_issuables():
    kind = "issues" if request.path.endswith("/issues") else "merge_requests"
    args = request.args.copy()
    if args.get("scope", "created_by_me") in ("created_by_me", "created-by-me") and not args.get("author_username"):
        args["author_username"] = g.user["username"]
    elif args.get("scope") in ("assigned_to_me", "assigned-to-me"):
        args["assignee_username"] = g.user["username"]
    rows = list_issuables(kind, None, args)
    page, h = paginate(rows)
    ent = issue_entity if kind == "issues" else mr_entity
    return js([ent(i, core.project_by_id(i["project_id"] if kind == "issues" else i["target_project_id"])) for i in page], headers=h)


@api("/projects/<pid>/issues")
@api("/projects/<pid>/merge_requests")
def list_project_issuables(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    kind = "issues" if request.path.endswith("/issues") else "merge_requests"
    args = request.args.copy()
    args.setdefault("state", "all")
    if args.get("labels"):
        args.setlist("label_name[]", as_labels(args["labels"]))
        del args["labels"]
    if args.get("order_by") == "updated_at":
        args["sort"] = "updated_asc" if args.get("sort") == "asc" else "updated_desc"
    elif args.get("sort") == "asc":
        args["sort"] = "created_asc"
    rows = list_issuables(kind, p, args)
    page, h = paginate(rows)
    return js([(issue_entity if kind == "issues" else mr_entity)(i, p) for i in page], headers=h)


def _issuable(p, kind, iid):
    table, pcol = ("issues", "project_id") if kind == "issues" else ("merge_requests", "target_project_id")
    return q(f"SELECT * FROM {table} WHERE {pcol}=%s AND iid=%s", (p["id"], iid), one=True)


@api("/projects/<pid>/issues/<int:iid>")
@api("/projects/<pid>/merge_requests/<int:iid>")
def get_issuable(pid, iid):
    p, e = _project_or_404(pid)
    if e:
        return e
    kind = "issues" if "/issues/" in request.path else "merge_requests"
    i = _issuable(p, kind, iid)
    if not i:
        return err(404, "404 Not found")
    return js((issue_entity if kind == "issues" else mr_entity)(i, p))


@api("/projects/<pid>/issues", methods=("POST",), auth=True)
def create_issue_api(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    b = body()
    if not b.get("title"):
        return js({"error": "title is missing"}, 400)
    i = create_issue(p, g.user, b["title"], b.get("description", ""), as_ids(b.get("assignee_ids") or b.get("assignee_id")),
                     b.get("due_date"), as_labels(b.get("labels")), b.get("milestone_id"),
                     str(b.get("confidential", "")).lower() in ("true", "1"))
    return js(issue_entity(i, p), 201)


@api("/projects/<pid>/issues/<int:iid>", methods=("PUT",), auth=True)
def update_issue_api(pid, iid):
    p, e = _project_or_404(pid)
    if e:
        return e
    i = _issuable(p, "issues", iid)
    if not i:
        return err(404, "404 Not found")
    if not (core.can_write(g.user, p, 20) or i["author_id"] == g.user["id"]):
        return err(403, "403 Forbidden")
    b = body()
    if "title" in b:
        x("UPDATE issues SET title=%s WHERE id=%s", (b["title"], i["id"]))
    if "description" in b:
        x("UPDATE issues SET description=%s WHERE id=%s", (b["description"], i["id"]))
    if "due_date" in b:
        x("UPDATE issues SET due_date=%s WHERE id=%s", (b["due_date"] or None, i["id"]))
    if "assignee_ids" in b or "assignee_id" in b:
        x("DELETE FROM issue_assignees WHERE issue_id=%s", (i["id"],))
        for a in as_ids(b.get("assignee_ids") or b.get("assignee_id")):
            x("INSERT INTO issue_assignees VALUES (%s,%s) ON CONFLICT DO NOTHING", (a, i["id"]))
    if b.get("state_event") == "close":
        x("UPDATE issues SET state_id=2, closed_at=now(), closed_by_id=%s WHERE id=%s", (g.user["id"], i["id"]))
    elif b.get("state_event") == "reopen":
        x("UPDATE issues SET state_id=1, closed_at=NULL, closed_by_id=NULL WHERE id=%s", (i["id"],))
    if "labels" in b:
        x("DELETE FROM label_links WHERE target_type='Issue' AND target_id=%s", (i["id"],))
        set_labels(p, "Issue", i["id"], as_labels(b["labels"]))
    x("UPDATE issues SET updated_at=now(), updated_by_id=%s WHERE id=%s", (g.user["id"], i["id"]))
    return js(issue_entity(_issuable(p, "issues", iid), p))


@api("/projects/<pid>/merge_requests", methods=("POST",), auth=True)
def create_mr_api(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 30):
        return err(403, "403 Forbidden")
    b = body()
    for k in ("source_branch", "target_branch", "title"):
        if not b.get(k):
            return js({"error": f"{k} is missing"}, 400)
    try:
        m = create_mr(p, g.user, b["source_branch"], b["target_branch"], b["title"], b.get("description", ""),
                      as_ids(b.get("assignee_ids") or b.get("assignee_id")), as_ids(b.get("reviewer_ids")), as_labels(b.get("labels")))
    except ValueError as ex:
        return js({"message": [str(ex)]}, 409 if "already exists" in str(ex) else 400)
    return js(mr_entity(m, p), 201)


@api("/projects/<pid>/issues/<int:iid>/notes")
@api("/projects/<pid>/merge_requests/<int:iid>/notes")
def list_notes(pid, iid):
    p, e = _project_or_404(pid)
    if e:
        return e
    kind = "issues" if "/issues/" in request.path else "merge_requests"
    i = _issuable(p, kind, iid)
    if not i:
        return err(404, "404 Not found")
    order = "ASC" if request.args.get("sort") == "asc" else "DESC"
    rows = q(f"SELECT * FROM notes WHERE noteable_type=%s AND noteable_id=%s ORDER BY created_at {order}, id {order}",
             ("Issue" if kind == "issues" else "MergeRequest", i["id"]))
    page, h = paginate(rows)
    return js([note_entity(n) for n in page], headers=h)


@api("/projects/<pid>/issues/<int:iid>/notes", methods=("POST",), auth=True)
@api("/projects/<pid>/merge_requests/<int:iid>/notes", methods=("POST",), auth=True)
def create_note_api(pid, iid):
    p, e = _project_or_404(pid)
    if e:
        return e
    kind = "issues" if "/issues/" in request.path else "merge_requests"
    i = _issuable(p, kind, iid)
    if not i:
        return err(404, "404 Not found")
    b = body()
    if not b.get("body"):
        return js({"error": "body is missing"}, 400)
    n = add_note(p, "Issue" if kind == "issues" else "MergeRequest", i["id"], g.user, b["body"])
    return js(note_entity(n), 201)


# repository -----------------------------------------------------------
@api("/projects/<pid>/repository/branches")
def list_branches(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    dflt = core.default_branch(p["id"])
    out = []
    for b in core.branches(p["id"]):
        c = core.commits(p["id"], f"refs/heads/{b}", limit=1)
        out.append({"name": b, "default": b == dflt, "merged": False, "protected": b == dflt, "commit": c[0] if c else None,
                    "web_url": web(f"{p['full_path']}/-/tree/{b}")})
    page, h = paginate(out)
    return js(page, headers=h)


@api("/projects/<pid>/repository/branches", methods=("POST",), auth=True)
def create_branch(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 30):
        return err(403, "403 Forbidden")
    b = body()
    name, ref = b.get("branch"), b.get("ref")
    if not name or not ref:
        return js({"error": "branch is missing" if not name else "ref is missing"}, 400)
    sha = core.git_out(p["id"], "rev-parse", "--verify", "-q", ref + "^{commit}")
    if not sha:
        return js({"message": "Invalid reference name: " + ref}, 400)
    if name in core.branches(p["id"]):
        return js({"message": "Branch already exists"}, 400)
    core.git(p["id"], "update-ref", f"refs/heads/{name}", sha.strip(), check=True)
    return js({"name": name, "commit": core.commits(p["id"], sha.strip(), limit=1)[0], "default": False}, 201)


@api("/projects/<pid>/repository/commits")
def list_commits(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    ref = request.args.get("ref_name") or core.default_branch(p["id"])
    rows = core.commits(p["id"], ref, request.args.get("path"), limit=100000) if ref else []
    page, h = paginate(rows)
    return js(page, headers=h)


@api("/projects/<pid>/repository/commits", methods=("POST",), auth=True)
def create_commit(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    if not core.can_write(g.user, p, 30):
        return err(403, "403 Forbidden")
    b = request.get_json(silent=True) or {}
    if not b.get("branch") or not b.get("commit_message") or not b.get("actions"):
        return js({"error": "branch, commit_message, actions are missing"}, 400)
    try:
        sha = core.write_commit(p["id"], b["branch"], b.get("start_branch"), b["commit_message"], b["actions"],
                                {"name": b.get("author_name") or g.user["name"], "email": b.get("author_email") or g.user["email"]})
    except ValueError as ex:
        return js({"message": str(ex)}, 400)
    x("UPDATE projects SET last_activity_at=now(), last_repository_updated_at=now() WHERE id=%s", (p["id"],))
    return js(core.commits(p["id"], sha, limit=1)[0], 201)


@api("/projects/<pid>/repository/tree")
def repo_tree(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    ref = request.args.get("ref") or core.default_branch(p["id"])
    items = core.ls_tree(p["id"], ref, request.args.get("path", "").strip("/")) if ref else None
    if items is None:
        return err(404, "404 Tree Not Found")
    page, h = paginate(items)
    return js(page, headers=h)


@api("/projects/<pid>/repository/files/<path:fpath>/raw")
def file_raw(pid, fpath):
    p, e = _project_or_404(pid)
    if e:
        return e
    ref = request.args.get("ref") or core.default_branch(p["id"])
    data = core.blob(p["id"], ref, urllib.parse.unquote(fpath))
    if data is None:
        return err(404, "404 File Not Found")
    return Response(data, 200, {"Content-Type": "text/plain; charset=utf-8"})


@api("/projects/<pid>/repository/files/<path:fpath>")
def file_meta(pid, fpath):
    import base64
    p, e = _project_or_404(pid)
    if e:
        return e
    ref = request.args.get("ref") or core.default_branch(p["id"])
    path = urllib.parse.unquote(fpath)
    data = core.blob(p["id"], ref, path)
    if data is None:
        return err(404, "404 File Not Found")
    last = core.commits(p["id"], ref, path, limit=1)
    return js({"file_name": path.rsplit("/", 1)[-1], "file_path": path, "size": len(data), "encoding": "base64",
               "content": base64.b64encode(data).decode(), "ref": ref, "last_commit_id": last[0]["id"] if last else None})


@api("/projects/<pid>/labels")
def labels(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    rows = q("SELECT id, title AS name, color, description FROM labels WHERE project_id=%s ORDER BY title", (p["id"],))
    page, h = paginate(rows)
    return js(page, headers=h)


@api("/projects/<pid>/milestones")
def milestones(pid):
    p, e = _project_or_404(pid)
    if e:
        return e
    rows = q("SELECT * FROM milestones WHERE project_id=%s ORDER BY id", (p["id"],))
    page, h = paginate(rows)
    return js([milestone_entity(m) for m in page], headers=h)


# groups ----------------------------------------------------------------
def group_entity(n):
    return {"id": n["id"], "name": n["name"], "path": n["path"], "full_path": n["path"], "full_name": n["name"],
            "description": n["description"], "visibility": core.VIS[n["visibility_level"]], "parent_id": n["parent_id"],
            "web_url": web("groups/" + n["path"]), "created_at": n["created_at"]}


def find_group(gid):
    gid = urllib.parse.unquote(gid)
    return q("SELECT * FROM namespaces WHERE type='Group' AND " + ("id=%s" if gid.isdigit() else "lower(path)=lower(%s)"),
             (int(gid) if gid.isdigit() else gid,), one=True)


@api("/groups")
def groups():
    rows = q("SELECT * FROM namespaces WHERE type='Group' AND (visibility_level=20 OR %s) ORDER BY name", (bool(g.user),))
    page, h = paginate(rows)
    return js([group_entity(n) for n in page], headers=h)


@api("/groups", methods=("POST",), auth=True)
def create_group():
    b = body()
    if not b.get("name") or not b.get("path"):
        return js({"error": "name, path are missing"}, 400)
    if core.find_route(b["path"]):
        return js({"message": "Failed to save group {:path=>[\"has already been taken\"]}"}, 400)
    n = x("""INSERT INTO namespaces (name, path, type, visibility_level, description, created_at, updated_at)
             VALUES (%s,%s,'Group',%s,%s,now(),now()) RETURNING *""",
          (b["name"], b["path"], core.VIS_NUM.get(b.get("visibility", "private"), 0), b.get("description", "")))
    x("UPDATE namespaces SET traversal_ids=ARRAY[id] WHERE id=%s", (n["id"],))
    x("INSERT INTO routes (source_id, source_type, path, name, namespace_id, created_at, updated_at) VALUES (%s,'Namespace',%s,%s,%s,now(),now())",
      (n["id"], b["path"], b["name"], n["id"]))
    add_member("Namespace", n["id"], g.user, 50, None, n["id"])
    return js(group_entity(n), 201)


@api("/groups/<gid>")
def group(gid):
    n = find_group(gid)
    return js(group_entity(n)) if n else err(404, "404 Group Not Found")


@api("/groups/<gid>/members")
@api("/groups/<gid>/members/all")
def group_members(gid):
    from .records import group_members as gm   # (this module's group_members is the API view)
    n = find_group(gid)
    if not n:
        return err(404, "404 Group Not Found")
    page, h = paginate(gm(n))
    return js([member_entity(m) for m in page], headers=h)


@api("/groups/<gid>/members", methods=("POST",), auth=True)
def add_group_member(gid):
    from .records import group_members as gm   # (this module's group_members is the API view)
    n = find_group(gid)
    if not n:
        return err(404, "404 Group Not Found")
    if not (g.user["admin"] or any(m["user_id"] == g.user["id"] and m["access_level"] >= 50 for m in gm(n))):
        return err(403, "403 Forbidden")
    b = body()
    u = q("SELECT * FROM users WHERE id=%s", (int(b.get("user_id", 0) or 0),), one=True) if str(b.get("user_id", "")).isdigit() else find_user(b.get("username", ""))
    if not u:
        return err(404, "404 User Not Found")
    if any(m["user_id"] == u["id"] for m in gm(n)):
        return err(409, "Member already exists")
    add_member("Namespace", n["id"], u, int(b.get("access_level", 10)), b.get("expires_at"), n["id"])
    return js(member_entity([m for m in gm(n) if m["user_id"] == u["id"]][0]), 201)


@bp.route("/api/v4/<path:rest>", methods=["GET", "POST", "PUT", "DELETE"])
def api_404(rest):
    return err(404, "404 Not Found")
