"""Project, namespace and git smart-HTTP routes of the GitLab replica (URL shapes of
contract-postmill-gitlab-map.md §2.4: /<ns>/<proj>/-/issues/<iid>, /-/merge_requests/<iid>,
/-/project_members, /-/tree|blob|raw|commits|graphs/<ref>/..., /<ns>/<proj>.git/...), and
project creation (/projects/new, POST /projects)."""
import os, subprocess

from flask import Blueprint, Response, g, redirect, request

from . import core
from .core import ACCESS, q, x
from .pages import flash, group_page, not_found, parse_member_form, render, require_login, user_page
from .records import add_member, add_note, create_issue, create_mr, create_project, find_user, list_issuables

bp = Blueprint("projects", __name__)


@bp.route("/projects/new")
def new_project_page():
    r = require_login()
    if r:
        return r
    nss = q("""SELECT n.* FROM namespaces n WHERE (n.type='User' AND n.owner_id=%s) OR (n.type='Group' AND EXISTS
               (SELECT 1 FROM members m WHERE m.source_type='Namespace' AND m.source_id=n.id AND m.user_id=%s AND m.access_level>=30))
               ORDER BY n.type DESC, n.path""", (g.user["id"], g.user["id"]))
    return render("new_project.html", title="New Project", namespaces=nss, error=None)


@bp.route("/projects", methods=["POST"])
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


def project_ctx(p, ref=None):
    ref = ref or core.default_branch(p["id"])
    return {"p": p, "ref": ref, "title": f"{p['name']} · {p['ns_name']}"}


def gate(p):
    """GitLab: private project → anonymous 302 to sign-in; signed-in non-member → 404."""
    if core.can_read(g.user, p):
        return None
    if not g.user:
        return require_login()
    return not_found()


@bp.route("/<path:full>", methods=["GET", "POST", "PUT"])
def catch_all(full):
    if ".git/" in full or full.endswith(".git"):
        return git_http(full)
    if "/-/" in full:
        ppath, rest = full.split("/-/", 1)
    else:
        ppath, rest = full, None
    if rest is None and full.endswith("/notes") and request.method == "POST":
        p = core.project_by_path(full[:-len("/notes")])
        return create_note_web(p) if p else not_found()
    if rest is None and full.endswith("/toggle_star.json") and request.method == "POST":
        p = core.project_by_path(full[:-len("/toggle_star.json")])
        return toggle_star(p) if p else not_found()
    route = core.find_route(ppath)
    if not route:
        return not_found()
    if route["source_type"] == "Namespace":
        ns = q("SELECT * FROM namespaces WHERE id=%s", (route["source_id"],), one=True)
        if rest is not None:
            return not_found()
        if ns["type"] == "User":
            u = q("SELECT * FROM users WHERE id=%s", (ns["owner_id"],), one=True)
            return user_page(u, projects=q("""SELECT p.*, r.path AS full_path, n.name AS ns_name FROM projects p
                JOIN routes r ON r.source_type='Project' AND r.source_id=p.id JOIN namespaces n ON n.id=p.namespace_id
                WHERE p.namespace_id=%s AND p.visibility_level=20 ORDER BY p.name""", (ns["id"],)))
        return group_page(ns["path"])
    p = core.project_by_id(route["source_id"])
    if route["path"] != ppath and request.method == "GET":
        pass  # GitLab redirects to canonical case; the replica serves either spelling
    denied = gate(p)
    if denied:
        return denied
    if rest is None:
        return project_home(p)
    head, _, tail = rest.partition("/")
    handler = {"tree": tree, "blob": blob_page, "raw": raw, "commits": commits_page, "graphs": graphs,
               "issues": issues, "merge_requests": merge_requests, "project_members": members,
               "milestones": milestones, "branches": branches_page}.get(head)
    return handler(p, tail) if handler else not_found()


def project_home(p):
    ref = core.default_branch(p["id"])
    tree = core.ls_tree(p["id"], ref) if ref else None
    readme = core.blob(p["id"], ref, "README.md") if tree else None
    c = core.conf()["gitlab"]
    ssh = f"ssh://git@{c['ssh_host']}:{c['ssh_port']}/{p['full_path']}.git" if c["ssh_port"] != 22 else f"git@{c['ssh_host']}:{p['full_path']}.git"
    starred = bool(g.user and q("SELECT 1 FROM users_star_projects WHERE user_id=%s AND project_id=%s", (g.user["id"], p["id"]), one=True))
    ncommits = int((core.git_out(p["id"], "rev-list", "--count", ref) or "0").strip() or 0) if tree else 0
    return render("project_home.html", **project_ctx(p, ref), tree=tree, readme=readme.decode(errors="replace") if readme else None,
                  ssh_url=ssh, http_url=f"{core.external_url()}/{p['full_path']}.git", starred=starred,
                  ncommits=ncommits, nbranches=len(core.branches(p["id"])))


def toggle_star(p):
    if not g.user:
        return require_login()
    if q("SELECT 1 FROM users_star_projects WHERE user_id=%s AND project_id=%s", (g.user["id"], p["id"]), one=True):
        x("DELETE FROM users_star_projects WHERE user_id=%s AND project_id=%s", (g.user["id"], p["id"]))
        x("UPDATE projects SET star_count=star_count-1 WHERE id=%s", (p["id"],))
    else:
        x("INSERT INTO users_star_projects (project_id, user_id, created_at, updated_at) VALUES (%s,%s,now(),now())", (p["id"], g.user["id"]))
        x("UPDATE projects SET star_count=star_count+1 WHERE id=%s", (p["id"],))
    return redirect(f"/{p['full_path']}", 302)


def tree(p, tail):
    ref, path = core.split_ref(p["id"], tail) if tail else (core.default_branch(p["id"]), "")
    if not ref:
        return not_found()
    items = core.ls_tree(p["id"], ref, path.strip("/"))
    if items is None:
        return not_found()
    return render("tree.html", **project_ctx(p, ref), tree=items, path=path)


def blob_page(p, tail):
    ref, path = core.split_ref(p["id"], tail)
    data = core.blob(p["id"], ref, path) if ref and path else None
    if data is None:
        return not_found()
    return render("blob.html", **project_ctx(p, ref), path=path, content=data.decode(errors="replace"))


def raw(p, tail):
    ref, path = core.split_ref(p["id"], tail)
    data = core.blob(p["id"], ref, path) if ref and path else None
    if data is None:
        return not_found()
    return Response(data, 200, {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff",
                                "Content-Disposition": "inline"})


def commits_page(p, tail):
    ref, path = core.split_ref(p["id"], tail) if tail else (core.default_branch(p["id"]), "")
    if not ref:
        return not_found()
    return render("commits.html", **project_ctx(p, ref), commits=core.commits(p["id"], ref, path or None, limit=100))


def graphs(p, tail):
    ref = core.split_ref(p["id"], tail)[0] if tail else core.default_branch(p["id"])
    if not ref:
        return not_found()
    out = core.git_out(p["id"], "shortlog", "-sne", ref) or ""
    people = []
    for line in out.splitlines():
        n, _, who = line.strip().partition("\t")
        name, _, email = who.rpartition(" <")
        people.append((int(n), name, email.rstrip(">")))
    return render("graphs.html", **project_ctx(p, ref), people=people)


def branches_page(p, tail):
    bs = core.branches(p["id"])
    return render("tree.html", **project_ctx(p), tree=[{"type": "tree", "name": b, "path": ""} for b in bs], path="branches")


def milestones(p, tail):
    if tail:
        m = q("SELECT * FROM milestones WHERE project_id=%s AND iid=%s", (p["id"], int(tail))) if tail.isdigit() else None
        if not m:
            return not_found()
        return render("milestone.html", **project_ctx(p), m=m[0])
    return render("milestones.html", **project_ctx(p), milestones=q("SELECT * FROM milestones WHERE project_id=%s ORDER BY due_date NULLS LAST, id", (p["id"],)))


# ------------------------------------------------------------------ issues and merge requests
def issuable_detail(p, kind, iid):
    mr = kind == "merge_requests"
    table, pcol = ("merge_requests", "target_project_id") if mr else ("issues", "project_id")
    i = q(f"""SELECT i.*, u.username AS author_username, u.name AS author_name FROM {table} i JOIN users u ON u.id=i.author_id
              WHERE i.{pcol}=%s AND i.iid=%s""", (p["id"], iid), one=True)
    if not i:
        return not_found()
    at, ac = ("merge_request_assignees", "merge_request_id") if mr else ("issue_assignees", "issue_id")
    assignees = q(f"SELECT u.* FROM {at} a JOIN users u ON u.id=a.user_id WHERE a.{ac}=%s ORDER BY u.username", (i["id"],))
    reviewers = q("SELECT u.* FROM merge_request_reviewers a JOIN users u ON u.id=a.user_id WHERE a.merge_request_id=%s", (i["id"],)) if mr else []
    ttype = "MergeRequest" if mr else "Issue"
    labels = [r["title"] for r in q("SELECT l.title FROM label_links ll JOIN labels l ON l.id=ll.label_id WHERE ll.target_type=%s AND ll.target_id=%s ORDER BY l.title", (ttype, i["id"]))]
    notes = q("SELECT n.*, u.username, u.name FROM notes n JOIN users u ON u.id=n.author_id WHERE n.noteable_type=%s AND n.noteable_id=%s ORDER BY n.created_at, n.id", (ttype, i["id"]))
    milestone = q("SELECT * FROM milestones WHERE id=%s", (i["milestone_id"],), one=True) if i["milestone_id"] else None
    ctx = project_ctx(p)
    ctx["title"] = f"{i['title']} ({'!' if mr else '#'}{iid}) · {p['name']}"
    return render("issue.html", **ctx, i=i, mr=mr, assignees=assignees, reviewers=reviewers, labels=labels, notes=notes,
                  milestone=milestone, ref_char="!" if mr else "#", noun="merge request" if mr else "issue")


def new_form(p, kind, error=None, **kw):
    mr = kind == "merge_requests"
    users = [m for m in core.project_members(p)]
    users = q("SELECT * FROM users WHERE id = ANY(%s) ORDER BY username", ([m["user_id"] for m in users] or [0],))
    bs = core.branches(p["id"])
    a = request.args
    return render("issue_new.html", **project_ctx(p), mr=mr, kind=kind, obj="merge_request" if mr else "issue",
                  noun="merge request" if mr else "issue", users=users, branch_list=bs, error=error,
                  src=a.get("merge_request[source_branch]"), tgt=a.get("merge_request[target_branch]") or core.default_branch(p["id"]), **kw)


def _ids(form, key):
    return [int(v) for v in form.getlist(key) if v.isdigit() and int(v) > 0]


def issues(p, tail):
    return issuables(p, tail, "issues")


def merge_requests(p, tail):
    return issuables(p, tail, "merge_requests")


def issuables(p, tail, kind):
    tail = tail.strip("/")
    mr = kind == "merge_requests"
    if tail == "" and request.method == "POST":
        if not g.user:
            return require_login()
        if not core.can_write(g.user, p, 10 if not mr else 30):
            return not_found()
        f = request.form
        obj = "merge_request" if mr else "issue"
        title = f.get(f"{obj}[title]", "").strip()
        if not title:
            return new_form(p, kind, error="Title can't be blank")
        if mr:
            try:
                m = create_mr(p, g.user, f.get("merge_request[source_branch]", ""), f.get("merge_request[target_branch]", ""), title,
                              f.get("merge_request[description]", ""), _ids(f, "merge_request[assignee_ids][]"), _ids(f, "merge_request[reviewer_ids][]"))
            except ValueError as e:
                return new_form(p, kind, error=str(e), title=title)
            return redirect(f"/{p['full_path']}/-/merge_requests/{m['iid']}", 302)
        i = create_issue(p, g.user, title, f.get("issue[description]", ""), _ids(f, "issue[assignee_ids][]"), f.get("issue[due_date]") or None)
        return redirect(f"/{p['full_path']}/-/issues/{i['iid']}", 302)
    if tail == "":
        return render("issues.html", **project_ctx(p), items=list_issuables(kind, p), kind=kind, state=request.args.get("state", "opened"),
                      noun="merge request" if mr else "issue")
    if tail == "new":
        if not g.user:
            return require_login()
        return new_form(p, kind)
    if tail.isdigit():
        return issuable_detail(p, kind, int(tail))
    return not_found()


def create_note_web(p):
    if not g.user:
        return require_login()
    if not core.can_read(g.user, p):
        return not_found()
    f = request.form
    mr = f.get("target_type") == "merge_request"
    table, pcol = ("merge_requests", "target_project_id") if mr else ("issues", "project_id")
    t = q(f"SELECT * FROM {table} WHERE id=%s AND {pcol}=%s", (int(f.get("target_id", 0) or 0), p["id"]), one=True)
    body = f.get("note[note]", "").strip()
    if not t or not body:
        return not_found()
    add_note(p, "MergeRequest" if mr else "Issue", t["id"], g.user, body)
    return redirect(f"/{p['full_path']}/-/{'merge_requests' if mr else 'issues'}/{t['iid']}", 302)


# ------------------------------------------------------------------ members
def members(p, tail):
    can_admin = core.can_write(g.user, p, 40)
    if request.method == "POST":
        if not g.user:
            return require_login()
        if not can_admin:
            return not_found()
        users, lvl, exp = parse_member_form()
        if lvl == 50 and not core.can_write(g.user, p, 50):
            lvl = 40
        for u in users:
            add_member("Project", p["id"], u, lvl, exp, p["project_namespace_id"])
        flash("notice", "Users were successfully added." if users else "No users specified.")
        return redirect(f"/{p['full_path']}/-/project_members", 302)
    ms = core.project_members(p)
    return render("members.html", **project_ctx(p), heading="Project members", source_name=p["name"], members=ms,
                  can_admin=can_admin, form_action=f"/{p['full_path']}/-/project_members",
                  levels=[(k, v) for k, v in ACCESS.items() if k >= 10], source_parent=p["ns_name"])


# ------------------------------------------------------------------ git smart HTTP
def http_basic_user():
    auth = request.authorization
    if not auth or not auth.username:
        return None
    u = find_user(auth.username) or q("SELECT * FROM users WHERE lower(email)=lower(%s)", (auth.username,), one=True)
    if u and u["state"] == "active" and core.check_password(u, auth.password or ""):
        return u
    t = core.token_user(auth.password or "")
    if t and (auth.username == t["username"] or auth.username in ("oauth2", "gitlab-ci-token", "private-token")):
        return t
    return None


def git_http(full):
    """Smart HTTP through `git http-backend` (CGI) with GitLab's basic-auth rules: username +
    password, or username + personal access token. Pull of public projects needs no auth."""
    ppath, _, svc_path = full.partition(".git")
    p = core.project_by_path(ppath)
    if not p:
        return Response("The project you were looking for could not be found.", 404)
    write = request.args.get("service") == "git-receive-pack" or svc_path.endswith("/git-receive-pack")
    user = http_basic_user()
    if request.authorization and not user:
        return Response("HTTP Basic: Access denied\n", 401, {"WWW-Authenticate": 'Basic realm="GitLab"'})
    allowed = core.can_write(user, p, 30) if write else core.can_read(user, p)
    if not allowed:
        if not user:
            return Response("HTTP Basic: Access denied\n", 401, {"WWW-Authenticate": 'Basic realm="GitLab"'})
        return Response("You are not allowed to push code to this project.\n" if write else "Not found\n", 403 if write else 404)
    repo = core.repo_path(p["id"])
    env = {"GIT_PROJECT_ROOT": os.path.dirname(repo), "GIT_HTTP_EXPORT_ALL": "1",
           "PATH_INFO": "/" + os.path.basename(repo) + (svc_path or "/"), "REQUEST_METHOD": request.method,
           "QUERY_STRING": request.query_string.decode(), "CONTENT_TYPE": request.headers.get("Content-Type", ""),
           "REMOTE_USER": user["username"] if user else "", "REMOTE_ADDR": request.remote_addr or "",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/var/opt/gitlab",
           "GIT_COMMITTER_NAME": user["name"] if user else "", "GIT_COMMITTER_EMAIL": user["email"] if user else ""}
    if request.headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
    if request.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
    body = request.get_data() if request.method == "POST" else b""
    env["CONTENT_LENGTH"] = str(len(body))
    proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
    out = proc.stdout
    head, _, payload = out.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = out.partition(b"\n\n")
    status, headers = 200, {}
    for line in head.decode(errors="replace").splitlines():
        k, _, v = line.partition(":")
        if k.lower() == "status":
            status = int(v.strip().split()[0])
        elif k:
            headers[k.strip()] = v.strip()
    if write and svc_path.endswith("/git-receive-pack") and status == 200:
        x("UPDATE projects SET last_activity_at=now(), last_repository_updated_at=now() WHERE id=%s", (p["id"],))
    return Response(payload, status, headers)
