"""Web UI of the GitLab contract replica (Flask, served by gunicorn as the "puma" service).

Contract: contract-postmill-gitlab-map.md §2.2 (sign-in), §2.4 (DOM hooks, URL shapes),
webarena-official.md §1.4 and §3.2 (/-/profile probe, /explore). A replica, not GitLab.
"""
import datetime as dt, os, re, subprocess, time, urllib.parse

from flask import Flask, Response, abort, g, jsonify, redirect, request
from jinja2 import DictLoader
from werkzeug.middleware.proxy_fix import ProxyFix

from . import core
from .core import ACCESS, VIS, q, x
from .templates import T

app = Flask(__name__)


class KeepEncodedSlashes:
    """GitLab accepts URL-encoded project paths in the API (`/api/v4/projects/byteblaze%2Fdotfiles`);
    WSGI servers decode %2F before routing, so rebuild PATH_INFO from the raw URI for /api/v4."""

    def __init__(self, wsgi):
        self.wsgi = wsgi

    def __call__(self, environ, start_response):
        raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
        if raw and raw.startswith("/api/v4/") and "%2f" in raw.lower():
            path = raw.split("?", 1)[0]
            path = re.sub(r"%2[fF]", "%252F", path)
            environ["PATH_INFO"] = urllib.parse.unquote_to_bytes(path).decode("latin-1")
        return self.wsgi(environ, start_response)


app.wsgi_app = ProxyFix(KeepEncodedSlashes(app.wsgi_app), x_for=1, x_proto=1)
app.jinja_loader = DictLoader(T)
app.jinja_env.autoescape = True
app.url_map.strict_slashes = False
PROTECTED_PATHS = ("/users/sign_in", "/users", "/users/password", "/users/confirmation", "/users/unlock")
STATE_NAME = {1: "Open", 2: "Closed", 3: "Merged", 4: "Locked"}


def vis_title(p):
    return {0: "Private - Project access must be granted explicitly to each user. If this project is part of a group, access is granted to members of the group.",
            10: "Internal - The project can be accessed by any logged in user except external users.",
            20: "Public - The project can be accessed without any authentication."}[p["visibility_level"]]


def render(name, status=200, **ctx):
    ctx.setdefault("title", "GitLab")
    flashes = g.sess.pop("_flash", []) if g.sess.get("_flash") else []
    if flashes:
        g.sess_dirty = True
    html = app.jinja_env.get_template(name).render(
        cu=g.user, csrf=core.csrf_token(), flashes=flashes, vis=VIS, vis_title=vis_title, access=ACCESS,
        state_name=STATE_NAME, page_id=request.endpoint or "", **ctx)
    return Response(html, status=status, mimetype="text/html")


def flash(kind, msg):
    core.session_set("_flash", g.sess.get("_flash", []) + [[kind, msg]])


def not_found():
    return render("error.html", 404, code="404", message="Page Not Found", title="Not Found")


def require_login():
    if not g.user:
        if request.method == "GET":
            core.session_set("user_return_to", request.full_path.rstrip("?"))
        return redirect("/users/sign_in", 302)
    return None


@app.before_request
def before():
    g.user = None
    if request.path.startswith("/api/v4"):
        return None      # the API authenticates on its own (api.py)
    core.load_session()
    g.user = core.session_user()
    if request.method == "POST" and request.path in PROTECTED_PATHS and throttled():
        # Rack::Attack runs before Rails' CSRF check (protected paths throttle, §2.2)
        return Response("Retry later\n", 429, {"Retry-After": "60", "Content-Type": "text/plain"})
    if request.method == "POST" and not request.path.endswith((".git/git-upload-pack", ".git/git-receive-pack")):
        if not core.csrf_ok():
            return Response("Can't verify CSRF token authenticity.", 422)
    return None


@app.after_request
def after(resp):
    if not request.path.startswith("/api/v4"):
        core.save_session(resp)
    resp.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
    return resp


app.teardown_appcontext(core.close_db)


# ------------------------------------------------------------------ sign in / out
def throttled():
    """Rack::Attack "protected paths" throttle: N POST/period per IP on /users/sign_in (§2.2)."""
    s = q("SELECT * FROM application_settings ORDER BY id LIMIT 1", one=True)
    if not s or not s["throttle_protected_paths_enabled"]:
        return False
    period = s["throttle_protected_paths_period_in_seconds"]
    key = f"cache:gitlab:rack::attack:{int(time.time()) // period}:throttle_unauthenticated_protected_paths:{request.remote_addr}"
    r = core.rds()
    n = r.incr(key)
    r.expire(key, period + 1)
    return n > s["throttle_protected_paths_requests_per_period"]


@app.route("/users/sign_in", methods=["GET", "POST"])
def sign_in():
    if request.method == "GET":
        if g.user:
            return redirect("/", 302)
        return render("sign_in.html", title="Sign in", login="", error=None)
    login = request.form.get("user[login]", "").strip()
    password = request.form.get("user[password]", "")
    u = q("SELECT * FROM users WHERE lower(username)=lower(%s) OR lower(email)=lower(%s)", (login, login), one=True)
    err = "Invalid login or password."
    if u and u["locked_at"] and u["locked_at"] > core.now() - dt.timedelta(minutes=10):
        err = "Your account is locked."
    elif u and u["state"] == "active" and core.check_password(u, password):
        x("UPDATE users SET failed_attempts=0, locked_at=NULL, sign_in_count=sign_in_count+1,"
          " last_sign_in_at=current_sign_in_at, current_sign_in_at=now() WHERE id=%s", (u["id"],))
        back = g.sess.get("user_return_to") or "/"
        core.start_user_session(u)
        return redirect(back if back.startswith("/") and not back.startswith("//") else "/", 302)
    elif u:
        row = x("UPDATE users SET failed_attempts=failed_attempts+1 WHERE id=%s RETURNING failed_attempts", (u["id"],))
        if row["failed_attempts"] >= 10:
            x("UPDATE users SET locked_at=now(), failed_attempts=0 WHERE id=%s", (u["id"],))
    return render("sign_in.html", title="Sign in", login=login, error=err)


@app.route("/users/sign_out", methods=["POST", "GET"])
def sign_out():
    core.end_session()
    return redirect("/users/sign_in", 302)


# ------------------------------------------------------------------ dashboards, explore
def visible_projects(extra="", args=(), order="p.last_activity_at DESC"):
    u = g.user
    if u and u["admin"]:
        cond, cargs = "TRUE", ()
    elif u:
        cond = "(p.visibility_level >= 10 OR EXISTS (SELECT 1 FROM project_authorizations a WHERE a.project_id=p.id AND a.user_id=%s))"
        cargs = (u["id"],)
    else:
        cond, cargs = "p.visibility_level = 20", ()
    return q(f"""SELECT p.*, r.path AS full_path, n.name AS ns_name, n.path AS ns_path FROM projects p
                JOIN routes r ON r.source_type='Project' AND r.source_id=p.id JOIN namespaces n ON n.id=p.namespace_id
                WHERE {cond} {extra} ORDER BY {order}""", cargs + tuple(args))


def member_projects(user_id):
    return visible_projects("AND EXISTS (SELECT 1 FROM project_authorizations a WHERE a.project_id=p.id AND a.user_id=%s)",
                            (user_id,))


@app.route("/")
def root():
    r = require_login()
    if r:
        return r
    return render("project_list.html", title="Projects · Dashboard", heading="Projects",
                  projects=member_projects(g.user["id"]),
                  tabs=[("/dashboard/projects", "Your projects"), ("/dashboard/projects/starred", "Starred projects"),
                        ("/explore/projects", "Explore projects")])


@app.route("/dashboard/projects")
@app.route("/dashboard/projects/<scope>")
def dashboard_projects(scope=None):
    r = require_login()
    if r:
        return r
    if scope == "starred":
        projects = visible_projects("AND p.id IN (SELECT project_id FROM users_star_projects WHERE user_id=%s)", (g.user["id"],))
    else:
        projects = member_projects(g.user["id"])
    return render("project_list.html", title="Projects · Dashboard", heading="Projects", projects=projects,
                  tabs=[("/dashboard/projects", "Your projects"), ("/dashboard/projects/starred", "Starred projects")])


@app.route("/explore")
@app.route("/explore/projects")
@app.route("/explore/projects/<scope>")
def explore(scope=None):
    order = "p.star_count DESC, p.id" if scope == "starred" else "p.last_activity_at DESC"
    return render("project_list.html", title="Explore projects", heading="Explore projects",
                  projects=visible_projects(order=order),
                  tabs=[("/explore/projects", "All"), ("/explore/projects/trending", "Trending"),
                        ("/explore/projects/starred", "Most starred")])


@app.route("/explore/groups")
def explore_groups():
    gs = q("SELECT * FROM namespaces WHERE type='Group' AND visibility_level=20 ORDER BY name")
    return render("dashboard_issues.html", title="Explore groups", heading="Explore groups", kind="",
                  items=[{"full_path": x_["path"], "iid": "", "title": x_["name"]} for x_ in gs])


ISSUE_SQL = """SELECT i.*, r.path AS full_path, u.username AS author_username, u.name AS author_name,
  coalesce((SELECT array_agg(l.title ORDER BY l.title) FROM label_links ll JOIN labels l ON l.id=ll.label_id
            WHERE ll.target_type=%s AND ll.target_id=i.id), '{{}}') AS labels
  FROM {table} i JOIN routes r ON r.source_type='Project' AND r.source_id=i.{pcol} JOIN users u ON u.id=i.author_id"""


def list_issuables(kind, project=None, args=None):
    """Issues or MRs filtered like GitLab's list URLs: state, label_name[], search, sort,
    assignee_username, reviewer_username, author_username."""
    args = args or request.args
    table, pcol, ttype = ("issues", "project_id", "Issue") if kind == "issues" else ("merge_requests", "target_project_id", "MergeRequest")
    sql = ISSUE_SQL.format(table=table, pcol=pcol)
    where, params = [], [ttype]
    if project:
        where.append(f"i.{pcol}=%s")
        params.append(project["id"])
    else:
        ids = [p["id"] for p in visible_projects()]
        where.append(f"i.{pcol} = ANY(%s)")
        params.append(ids or [0])
    state = args.get("state", "opened")
    st = {"opened": [1], "closed": [2], "merged": [3], "locked": [4], "all": [1, 2, 3, 4]}.get(state, [1])
    where.append("i.state_id = ANY(%s)")
    params.append(st)
    for lab in args.getlist("label_name[]") + args.getlist("labels"):
        for one in lab.split(",") if "labels" in args else [lab]:
            if one == "None":
                where.append(f"NOT EXISTS (SELECT 1 FROM label_links ll WHERE ll.target_type='{ttype}' AND ll.target_id=i.id)")
            else:
                where.append(f"EXISTS (SELECT 1 FROM label_links ll JOIN labels l ON l.id=ll.label_id WHERE ll.target_type='{ttype}' AND ll.target_id=i.id AND l.title=%s)")
                params.append(one)
    if args.get("search"):
        where.append("(i.title ILIKE %s OR i.description ILIKE %s)")
        params += ["%" + args["search"] + "%"] * 2
    if args.get("author_username"):
        where.append("lower(u.username)=lower(%s)")
        params.append(args["author_username"])
    if args.get("assignee_username"):
        at = "issue_assignees" if kind == "issues" else "merge_request_assignees"
        ac = "issue_id" if kind == "issues" else "merge_request_id"
        where.append(f"EXISTS (SELECT 1 FROM {at} a JOIN users au ON au.id=a.user_id WHERE a.{ac}=i.id AND lower(au.username)=lower(%s))")
        params.append(args["assignee_username"])
    if args.get("reviewer_username") and kind != "issues":
        where.append("EXISTS (SELECT 1 FROM merge_request_reviewers a JOIN users au ON au.id=a.user_id WHERE a.merge_request_id=i.id AND lower(au.username)=lower(%s))")
        params.append(args["reviewer_username"])
    sort = args.get("sort", "created_date")
    order = {"created_asc": "i.created_at ASC", "created_date": "i.created_at DESC", "created_desc": "i.created_at DESC",
             "updated_desc": "i.updated_at DESC", "updated_asc": "i.updated_at ASC",
             "due_date": "i.due_date ASC NULLS LAST" if kind == "issues" else "i.created_at DESC"}.get(sort, "i.created_at DESC")
    return q(sql + " WHERE " + " AND ".join(where) + f" ORDER BY {order}, i.id DESC", tuple(params))


@app.route("/dashboard/issues")
@app.route("/dashboard/merge_requests")
def dashboard_issues():
    r = require_login()
    if r:
        return r
    kind = "issues" if request.path.endswith("issues") else "merge_requests"
    items = list_issuables(kind)
    return render("dashboard_issues.html", title="Issues" if kind == "issues" else "Merge requests",
                  heading="Issues" if kind == "issues" else "Merge requests", items=items, kind=kind)


@app.route("/dashboard/todos")
def todos():
    r = require_login()
    if r:
        return r
    rows = q("""SELECT t.*, r.path AS full_path, i.iid, i.title FROM todos t JOIN issues i ON i.id=t.target_id AND t.target_type='Issue'
                JOIN routes r ON r.source_type='Project' AND r.source_id=t.project_id WHERE t.user_id=%s AND t.state='pending'
                ORDER BY t.id DESC""", (g.user["id"],))
    return render("todos.html", title="To-Do List", todos=rows)


# ------------------------------------------------------------------ profile
def user_status(user_id):
    return q("SELECT * FROM user_statuses WHERE user_id=%s", (user_id,), one=True)


@app.route("/-/profile", methods=["GET", "POST"])
def profile():
    r = require_login()
    if r:
        return r
    if request.method == "POST":
        f = request.form
        x("UPDATE users SET name=coalesce(%s,name), website_url=coalesce(%s,website_url), location=coalesce(%s,location),"
          " bio=coalesce(%s,bio), updated_at=now() WHERE id=%s",
          (f.get("user[name]"), f.get("user[website_url]"), f.get("user[location]"), f.get("user[bio]"), g.user["id"]))
        x("UPDATE user_details SET website_url=u.website_url, location=u.location FROM users u WHERE u.id=user_details.user_id AND u.id=%s", (g.user["id"],))
        if "user[status][message]" in f or "user[status][availability]" in f:
            x("""INSERT INTO user_statuses (user_id, message, availability) VALUES (%s,%s,%s)
                 ON CONFLICT (user_id) DO UPDATE SET message=EXCLUDED.message, availability=EXCLUDED.availability""",
              (g.user["id"], f.get("user[status][message]") or None, 1 if f.get("user[status][availability]") == "busy" else 0))
        flash("notice", "Profile was successfully updated")
        return redirect("/-/profile", 302)
    return render("profile_edit.html", title="Profile", ustatus=user_status(g.user["id"]) or {})


@app.route("/-/profile/personal_access_tokens", methods=["GET", "POST"])
def pat():
    r = require_login()
    if r:
        return r
    new = None
    if request.method == "POST":
        scopes = request.form.getlist("personal_access_token[scopes][]") or ["api"]
        new, _ = core.new_token(g.user["id"], request.form.get("personal_access_token[name]") or "token", scopes,
                                request.form.get("personal_access_token[expires_at]") or None)
    toks = q("SELECT * FROM personal_access_tokens WHERE user_id=%s AND NOT revoked ORDER BY id", (g.user["id"],))
    return render("tokens.html", title="Personal Access Tokens", tokens=toks, new_token=new)


# ------------------------------------------------------------------ users and groups
def user_page(u, people=None, projects=None):
    c = q("SELECT (SELECT count(*) FROM user_follow_users WHERE followee_id=%s) AS fr,"
          " (SELECT count(*) FROM user_follow_users WHERE follower_id=%s) AS fg", (u["id"], u["id"]), one=True)
    is_following = bool(g.user and q("SELECT 1 FROM user_follow_users WHERE follower_id=%s AND followee_id=%s",
                                     (g.user["id"], u["id"]), one=True))
    return render("user.html", title=u["name"], u=u, ustatus=user_status(u["id"]), followers=c["fr"], following=c["fg"],
                  people=people, projects=projects, is_following=is_following)


def find_user(username):
    return q("SELECT * FROM users WHERE lower(username)=lower(%s)", (username,), one=True)


@app.route("/users/<username>/following")
@app.route("/users/<username>/followers")
@app.route("/users/<username>/starred")
@app.route("/users/<username>/projects")
def user_sub(username):
    u = find_user(username)
    if not u:
        return not_found()
    if request.path.endswith("/following"):
        return user_page(u, people=q("SELECT u.* FROM user_follow_users f JOIN users u ON u.id=f.followee_id WHERE f.follower_id=%s ORDER BY u.username", (u["id"],)))
    if request.path.endswith("/followers"):
        return user_page(u, people=q("SELECT u.* FROM user_follow_users f JOIN users u ON u.id=f.follower_id WHERE f.followee_id=%s ORDER BY u.username", (u["id"],)))
    if request.path.endswith("/starred"):
        return user_page(u, projects=visible_projects("AND p.id IN (SELECT project_id FROM users_star_projects WHERE user_id=%s)", (u["id"],)))
    return user_page(u, projects=member_projects(u["id"]))


@app.route("/users/<username>/<action>", methods=["POST"])
def follow(username, action):
    r = require_login()
    if r:
        return r
    u = find_user(username)
    if not u or action not in ("follow", "unfollow"):
        return not_found()
    if action == "follow" and u["id"] != g.user["id"]:
        x("INSERT INTO user_follow_users VALUES (%s,%s) ON CONFLICT DO NOTHING", (g.user["id"], u["id"]))
    else:
        x("DELETE FROM user_follow_users WHERE follower_id=%s AND followee_id=%s", (g.user["id"], u["id"]))
    return redirect(f"/{u['username']}", 302)


def group_by_path(path):
    return q("SELECT * FROM namespaces WHERE type='Group' AND lower(path)=lower(%s)", (path,), one=True)


def group_members(grp):
    return q("""SELECT m.*, u.username, u.name, 'direct' AS via FROM members m JOIN users u ON u.id=m.user_id
                WHERE m.source_type='Namespace' AND m.source_id=%s AND m.requested_at IS NULL ORDER BY m.id""", (grp["id"],))


def add_member(source_type, source_id, user, level, expires_at=None, ns_id=None):
    """Create or update a membership (web form and API share it)."""
    mtype = "ProjectMember" if source_type == "Project" else "GroupMember"
    row = q("SELECT id FROM members WHERE source_type=%s AND source_id=%s AND user_id=%s", (source_type, source_id, user["id"]), one=True)
    if row:
        x("UPDATE members SET access_level=%s, expires_at=%s, updated_at=now() WHERE id=%s", (level, expires_at, row["id"]))
    else:
        x("""INSERT INTO members (access_level, source_id, source_type, user_id, type, member_namespace_id, created_by_id,
             expires_at, created_at, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,now(),now())""",
          (level, source_id, source_type, user["id"], mtype, ns_id, g.user["id"] if g.user else None, expires_at))
    if source_type == "Project":
        core.refresh_authorizations(source_id)
    else:
        for p in q("SELECT id FROM projects WHERE namespace_id=%s", (source_id,)):
            core.refresh_authorizations(p["id"])


def parse_member_form():
    ids = [s.strip() for s in re.split(r"[,\s]+", request.form.get("user_ids", request.form.get("user_id", ""))) if s.strip()]
    users = []
    for s in ids:
        u = q("SELECT * FROM users WHERE id=%s", (int(s),), one=True) if s.isdigit() else find_user(s.lstrip("@"))
        if u:
            users.append(u)
    lvl = int(request.form.get("access_level", 10))
    return users, lvl, request.form.get("expires_at") or None


@app.route("/groups/<path:gpath>/-/group_members", methods=["GET", "POST"])
def group_members_page(gpath):
    grp = group_by_path(gpath)
    if not grp:
        return not_found()
    is_owner = bool(g.user and (g.user["admin"] or any(m["user_id"] == g.user["id"] and m["access_level"] >= 50 for m in group_members(grp))))
    if request.method == "POST":
        r = require_login()
        if r:
            return r
        if not is_owner:
            return not_found()
        users, lvl, exp = parse_member_form()
        for u in users:
            add_member("Namespace", grp["id"], u, lvl, exp, grp["id"])
        flash("notice", "Users were successfully added.")
        return redirect(f"/groups/{grp['path']}/-/group_members", 302)
    return render("members.html", title="Group members", heading="Group members", source_name=grp["name"], members=group_members(grp),
                  can_admin=is_owner, form_action=f"/groups/{grp['path']}/-/group_members",
                  levels=[(k, v) for k, v in ACCESS.items() if k >= 10], source_parent=grp["name"])


@app.route("/groups/<path:gpath>")
def group_page(gpath):
    grp = group_by_path(gpath)
    if not grp:
        return not_found()
    return render("group.html", title=grp["name"], grp=grp, projects=visible_projects("AND p.namespace_id=%s", (grp["id"],)))


@app.route("/projects/new")
def new_project_page():
    r = require_login()
    if r:
        return r
    nss = q("""SELECT n.* FROM namespaces n WHERE (n.type='User' AND n.owner_id=%s) OR (n.type='Group' AND EXISTS
               (SELECT 1 FROM members m WHERE m.source_type='Namespace' AND m.source_id=n.id AND m.user_id=%s AND m.access_level>=30))
               ORDER BY n.type DESC, n.path""", (g.user["id"], g.user["id"]))
    return render("new_project.html", title="New Project", namespaces=nss, error=None)


def create_project(user, name, path=None, namespace_id=None, visibility=0, description="", readme=False):
    """Create a project row set + an empty (or README-initialised) bare repository. Returns the project."""
    path = path or re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")
    ns = q("SELECT * FROM namespaces WHERE id=%s", (namespace_id,), one=True) if namespace_id else \
        q("SELECT * FROM namespaces WHERE type='User' AND owner_id=%s", (user["id"],), one=True)
    if not ns:
        raise ValueError("Namespace not found")
    full = f"{ns['path']}/{path}"
    if core.find_route(full):
        raise ValueError("has already been taken")
    pns = x("""INSERT INTO namespaces (name, path, type, parent_id, visibility_level, created_at, updated_at)
               VALUES (%s,%s,'Project',%s,%s,now(),now()) RETURNING id""", (name, path, ns["id"], visibility))["id"]
    pid = x("""INSERT INTO projects (name, path, description, namespace_id, creator_id, visibility_level, project_namespace_id,
               created_at, updated_at, last_activity_at) VALUES (%s,%s,%s,%s,%s,%s,%s,now(),now(),now()) RETURNING id""",
            (name, path, description or "", ns["id"], user["id"], visibility, pns))["id"]
    x("UPDATE namespaces SET traversal_ids=ARRAY[%s,id] WHERE id=%s", (ns["id"], pns))
    x("INSERT INTO routes (source_id, source_type, path, name, namespace_id, created_at, updated_at) VALUES (%s,'Project',%s,%s,%s,now(),now())",
      (pid, full, f"{ns['name']} / {name}", ns["id"]))
    x("INSERT INTO members (access_level, source_id, source_type, user_id, type, member_namespace_id, created_by_id, created_at, updated_at)"
      " VALUES (50,%s,'Project',%s,'ProjectMember',%s,%s,now(),now())", (pid, user["id"], pns, user["id"]))
    x("INSERT INTO project_statistics (project_id, namespace_id) VALUES (%s,%s)", (pid, ns["id"]))
    core.refresh_authorizations(pid)
    repo = core.repo_path(pid)
    os.makedirs(os.path.dirname(repo), exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
    subprocess.run(["git", "--git-dir", repo, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    subprocess.run(["git", "--git-dir", repo, "config", "gitlab.fullpath", full], check=True)
    if readme:
        core.write_commit(pid, "main", None, "Initial commit",
                          [{"action": "create", "file_path": "README.md", "content": f"# {name}\n\n{description or ''}\n"}],
                          {"name": user["name"], "email": user["email"]})
    return core.project_by_id(pid)


@app.route("/projects", methods=["POST"])
def create_project_web():
    r = require_login()
    if r:
        return r
    f = request.form
    try:
        p = create_project(g.user, f.get("project[name]", "").strip(), f.get("project[path]") or None,
                           int(f["project[namespace_id]"]) if f.get("project[namespace_id]") else None,
                           int(f.get("project[visibility_level]", 0)), f.get("project[description]", ""),
                           f.get("project[initialize_with_readme]") == "1")
    except ValueError as e:
        return render("new_project.html", 200, title="New Project", namespaces=[], error=str(e))
    flash("notice", f"Project '{p['name']}' was successfully created.")
    return redirect(f"/{p['full_path']}", 302)


from . import api, project_pages  # noqa: E402,F401  (register routes)
