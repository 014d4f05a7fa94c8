"""Dashboard and explore routes: project lists, issue/MR lists, to-dos."""
from flask import Blueprint, g, request

from .core import q
from .pages import render, require_login
from .records import list_issuables, member_projects, visible_projects

bp = Blueprint("dashboard", __name__)


@bp.route("/")
def root():
    r = require_login()
    if r:
        return r
    return render("project_list.html", title="Projects · Dashboard", heading="Projects",
                  projects=member_projects(g.user["id"]),
                  tabs=[("/dashboard/projects", "Your projects"), ("/dashboard/projects/starred", "Starred projects"),
                        ("/explore/projects", "Explore projects")])


@bp.route("/dashboard/projects")
@bp.route("/dashboard/projects/<scope>")
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


@bp.route("/explore")
@bp.route("/explore/projects")
@bp.route("/explore/projects/<scope>")
def explore(scope=None):
    order = "p.star_count DESC, p.id" if scope == "starred" else "p.last_activity_at DESC"
    return render("project_list.html", title="Explore projects", heading="Explore projects",
                  projects=visible_projects(order=order),
                  tabs=[("/explore/projects", "All"), ("/explore/projects/trending", "Trending"),
                        ("/explore/projects/starred", "Most starred")])


@bp.route("/explore/groups")
def explore_groups():
    gs = q("SELECT * FROM namespaces WHERE type='Group' AND visibility_level=20 ORDER BY name")
    return render("dashboard_issues.html", title="Explore groups", heading="Explore groups", kind="",
                  items=[{"full_path": x_["path"], "iid": "", "title": x_["name"]} for x_ in gs])


@bp.route("/dashboard/issues")
@bp.route("/dashboard/merge_requests")
def dashboard_issues():
    r = require_login()
    if r:
        return r
    kind = "issues" if request.path.endswith("issues") else "merge_requests"
    items = list_issuables(kind)
    return render("dashboard_issues.html", title="Issues" if kind == "issues" else "Merge requests",
                  heading="Issues" if kind == "issues" else "Merge requests", items=items, kind=kind)


@bp.route("/dashboard/todos")
def todos():
    r = require_login()
    if r:
        return r
    rows = q("""SELECT t.*, r.path AS full_path, i.iid, i.title FROM todos t JOIN issues i ON i.id=t.target_id AND t.target_type='Issue'
                JOIN routes r ON r.source_type='Project' AND r.source_id=t.project_id WHERE t.user_id=%s AND t.state='pending'
                ORDER BY t.id DESC""", (g.user["id"],))
    return render("todos.html", title="To-Do List", todos=rows)
