"""Queries and writes shared by the web UI and the API: visible projects, issue/MR lists,
users, groups, memberships, new projects, issues, merge requests, labels and notes."""
import os, re, secrets, subprocess

from flask import g, request

from . import core
from .core import q, x


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


# ------------------------------------------------------------------ users and groups
def user_status(user_id):
    return q("SELECT * FROM user_statuses WHERE user_id=%s", (user_id,), one=True)


def find_user(username):
    return q("SELECT * FROM users WHERE lower(username)=lower(%s)", (username,), one=True)


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


# ------------------------------------------------------------------ projects
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


# ------------------------------------------------------------------ issues, merge requests, labels, notes
def create_issue(p, author, title, description="", assignee_ids=(), due_date=None, labels=(), milestone_id=None, confidential=False):
    iid = core.next_iid(p["id"], 0)
    # work item type 1: GitLab's base type "Issue" (seed/real_structure.py)
    i = x("""INSERT INTO issues (iid, project_id, title, description, author_id, due_date, milestone_id, confidential, created_at, updated_at,
                                 work_item_type_id)
             VALUES (%s,%s,%s,%s,%s,%s,%s,%s,now(),now(),1) RETURNING *""",
          (iid, p["id"], title, description or "", author["id"], due_date or None, milestone_id, confidential))
    for a in assignee_ids:
        x("INSERT INTO issue_assignees VALUES (%s,%s) ON CONFLICT DO NOTHING", (a, i["id"]))
    set_labels(p, "Issue", i["id"], labels)
    x("UPDATE projects SET last_activity_at=now() WHERE id=%s", (p["id"],))
    return i


def create_mr(p, author, source_branch, target_branch, title, description="", assignee_ids=(), reviewer_ids=(), labels=()):
    bs = core.branches(p["id"])
    if source_branch not in bs or target_branch not in bs:
        raise ValueError("Source branch or target branch does not exist")
    if source_branch == target_branch:
        raise ValueError("You can't use same project/branch for source and target")
    if q("SELECT 1 FROM merge_requests WHERE target_project_id=%s AND source_branch=%s AND target_branch=%s AND state_id=1",
         (p["id"], source_branch, target_branch), one=True):
        raise ValueError("Another open merge request already exists for this source branch")
    iid = core.next_iid(p["id"], 1)
    draft = title.lower().startswith(("draft:", "[draft]", "wip:"))
    m = x("""INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch, title, description,
             author_id, draft, merge_status, created_at, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,'unchecked',now(),now()) RETURNING *""",
          (iid, p["id"], p["id"], source_branch, target_branch, title, description or "", author["id"], draft))
    x("INSERT INTO merge_request_metrics (merge_request_id, target_project_id, created_at, updated_at) VALUES (%s,%s,now(),now())", (m["id"], p["id"]))
    for a in assignee_ids:
        x("INSERT INTO merge_request_assignees (user_id, merge_request_id, created_at) VALUES (%s,%s,now()) ON CONFLICT DO NOTHING", (a, m["id"]))
    for a in reviewer_ids:
        x("INSERT INTO merge_request_reviewers (user_id, merge_request_id, created_at) VALUES (%s,%s,now()) ON CONFLICT DO NOTHING", (a, m["id"]))
    set_labels(p, "MergeRequest", m["id"], labels)
    return m


def set_labels(p, ttype, tid, labels):
    for title in labels:
        if not title:
            continue
        lab = q("SELECT id FROM labels WHERE project_id=%s AND title=%s", (p["id"], title), one=True) or \
            x("INSERT INTO labels (title, color, project_id, type, created_at, updated_at) VALUES (%s,'#6699cc',%s,'ProjectLabel',now(),now()) RETURNING id", (title, p["id"]))
        x("INSERT INTO label_links (label_id, target_id, target_type, created_at, updated_at) VALUES (%s,%s,%s,now(),now())", (lab["id"], tid, ttype))


def add_note(p, ttype, tid, author, body):
    n = x("""INSERT INTO notes (note, noteable_type, noteable_id, author_id, project_id, discussion_id, created_at, updated_at)
             VALUES (%s,%s,%s,%s,%s,%s,now(),now()) RETURNING *""", (body, ttype, tid, author["id"], p["id"], secrets.token_hex(20)))
    x(f"UPDATE {'issues' if ttype == 'Issue' else 'merge_requests'} SET updated_at=now() WHERE id=%s", (tid,))
    return n
