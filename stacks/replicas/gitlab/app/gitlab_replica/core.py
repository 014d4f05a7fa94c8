"""Shared plumbing of the GitLab contract replica: config, DB, Redis sessions, auth, git.

Contract sources: contract-postmill-gitlab-map.md §2 (sessions §2.2, API auth §2.3, schema §2.5,
repositories §2.6). This is a replica (test double), not GitLab.
"""
import base64, datetime as dt, hashlib, hmac, json, os, secrets, subprocess

import psycopg2, psycopg2.extras, redis
from flask import g, request
from replica_common.pg import query

APPCONF = "/var/opt/gitlab/gitlab-rails/etc/gitlab.yml"
SECRETS = "/etc/gitlab/gitlab-secrets.json"
REPOS = "/var/opt/gitlab/git-data/repositories"
VERSION_FILE = "/opt/gitlab/embedded/service/gitlab-rails/VERSION"
SESSION_COOKIE = "_gitlab_session"
ACCESS = {0: "No access", 5: "Minimal Access", 10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}
VIS = {0: "private", 10: "internal", 20: "public"}
VIS_NUM = {v: k for k, v in VIS.items()}

_conf_cache = {"mtime": None, "conf": None}


def conf():
    st = os.stat(APPCONF).st_mtime
    if _conf_cache["mtime"] != st:
        _conf_cache["conf"] = json.load(open(APPCONF))
        _conf_cache["mtime"] = st
    return _conf_cache["conf"]


def external_url():
    return conf()["gitlab"]["external_url"]


_secrets = None


def db_key_base():
    global _secrets
    if _secrets is None:
        _secrets = json.load(open(SECRETS))
    return _secrets["gitlab_rails"]["db_key_base"]


def version():
    try:
        return open(VERSION_FILE).read().strip()
    except OSError:
        return "15.11.0"


def now():
    return dt.datetime.now(dt.timezone.utc)


# ---------------------------------------------------------------- database
def db():
    if "db" not in g:
        p = conf()["production"]
        g.db = psycopg2.connect(host=p["db_host"], dbname=p["database"], user=p["db_user"])
    return g.db


def q(sql, args=(), one=False):
    return query(db(), sql, args, one)


def x(sql, args=()):
    cur = db().cursor(cursor_factory=psycopg2.extras.RealDictCursor)
    cur.execute(sql, args)
    return cur.fetchone() if cur.description else None


def close_db(_exc=None):
    d = g.pop("db", None)
    if d is not None:
        if _exc is None:
            d.commit()
        else:
            d.rollback()
        d.close()


def rds():
    if "redis" not in g:
        g.redis = redis.Redis(unix_socket_path=conf()["production"]["redis_socket"])
    return g.redis


# ---------------------------------------------------------------- sessions (Redis, as GitLab)
def _private_id(public_id):
    return "2::" + hashlib.sha256(public_id.encode()).hexdigest()


def session_ttl():
    row = q("SELECT session_expire_delay FROM application_settings ORDER BY id LIMIT 1", one=True)
    return 60 * (row["session_expire_delay"] if row else 10080)


def load_session():
    g.sid, g.sess, g.sess_dirty = None, {}, False
    sid = request.cookies.get(SESSION_COOKIE)
    if sid and len(sid) < 200:
        raw = rds().get("session:gitlab:" + _private_id(sid))
        if raw:
            g.sid = sid
            try:
                g.sess = json.loads(raw)
            except ValueError:
                g.sess = {}


def session_set(key, value):
    g.sess[key] = value
    g.sess_dirty = True


def save_session(resp):
    if not g.get("sess_dirty"):
        return resp
    new = g.sid is None
    if new:
        g.sid = secrets.token_hex(16)
    rds().setex("session:gitlab:" + _private_id(g.sid), session_ttl(), json.dumps(g.sess))
    if new or g.get("sess_rotated"):
        resp.set_cookie(SESSION_COOKIE, g.sid, httponly=True, path="/", samesite="Lax",
                        secure=conf()["gitlab"]["https"])
    return resp


def start_user_session(user):
    """Log ``user`` in: rotate the session id (Devise/Warden do) and index it per user."""
    old = g.sid
    if old:
        rds().delete("session:gitlab:" + _private_id(old))
    g.sid = secrets.token_hex(16)
    g.sess_rotated = True
    g.sess = {"warden.user.user.key": [[user["id"]], user["encrypted_password"][:29]],
              "_csrf_token": secrets.token_urlsafe(32)}
    g.sess_dirty = True
    pid = _private_id(g.sid)
    meta = {"ip_address": request.remote_addr, "browser": request.user_agent.string[:100],
            "created_at": now().isoformat(), "updated_at": now().isoformat(), "session_private_id": pid}
    r = rds()
    ttl = session_ttl()
    r.setex(f"session:user:gitlab:{user['id']}:{pid}", ttl, json.dumps(meta))
    r.sadd(f"session:lookup:user:gitlab:{user['id']}", pid)


def end_session():
    if g.sid:
        pid = _private_id(g.sid)
        rds().delete("session:gitlab:" + pid)
        u = g.get("user")
        if u:
            rds().delete(f"session:user:gitlab:{u['id']}:{pid}")
            rds().srem(f"session:lookup:user:gitlab:{u['id']}", pid)
    g.sid, g.sess, g.sess_dirty = None, {}, False


def csrf_token():
    if "_csrf_token" not in g.sess:
        session_set("_csrf_token", secrets.token_urlsafe(32))
    return g.sess["_csrf_token"]


def csrf_ok():
    tok = request.form.get("authenticity_token") or request.headers.get("X-CSRF-Token")
    return bool(tok) and hmac.compare_digest(tok, g.sess.get("_csrf_token", ""))


def session_user():
    key = g.sess.get("warden.user.user.key")
    if not key:
        return None
    u = q("SELECT * FROM users WHERE id=%s", (key[0][0],), one=True)
    if not u or u["state"] != "active" or u["encrypted_password"][:29] != key[1]:
        return None
    return u


# ---------------------------------------------------------------- tokens
def token_digest(token):
    return base64.b64encode(hmac.new(db_key_base()[:32].encode(), token.encode(), hashlib.sha256).digest()).decode()


def token_user(token):
    row = q("""SELECT u.* FROM personal_access_tokens t JOIN users u ON u.id=t.user_id
               WHERE t.token_digest=%s AND NOT t.revoked AND (t.expires_at IS NULL OR t.expires_at > now())""",
            (token_digest(token),), one=True)
    if row:
        x("UPDATE personal_access_tokens SET last_used_at=now() WHERE token_digest=%s", (token_digest(token),))
    return row if row and row["state"] == "active" else None


def new_token(user_id, name, scopes=("api",), expires_at=None):
    tok = "glpat-" + secrets.token_urlsafe(15)[:20]
    row = x("""INSERT INTO personal_access_tokens (user_id, name, scopes, token_digest, expires_at, created_at, updated_at)
               VALUES (%s,%s,%s,%s,%s,now(),now()) RETURNING *""",
            (user_id, name, "---\n" + "".join(f"- {s}\n" for s in scopes), token_digest(tok), expires_at))
    return tok, row


def check_password(user, password):
    import bcrypt
    try:
        return bcrypt.checkpw(password.encode(), user["encrypted_password"].encode())
    except ValueError:
        return False


def hash_password(password):
    import bcrypt
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(10, prefix=b"2a")).decode()


# ---------------------------------------------------------------- routes, projects, permissions
def find_route(path):
    return q("SELECT * FROM routes WHERE lower(path)=lower(%s)", (path,), one=True)


def project_by_id(pid):
    return q("""SELECT p.*, r.path AS full_path, n.path AS ns_path, n.name AS ns_name, n.type AS ns_type,
                n.owner_id AS ns_owner_id FROM projects p JOIN routes r ON r.source_type='Project' AND r.source_id=p.id
                JOIN namespaces n ON n.id=p.namespace_id WHERE p.id=%s""", (pid,), one=True)


def project_by_path(path):
    r = q("SELECT source_id FROM routes WHERE source_type='Project' AND lower(path)=lower(%s)", (path,), one=True)
    return project_by_id(r["source_id"]) if r else None


def access_level(user, project):
    if not user:
        return 0
    row = q("SELECT access_level FROM project_authorizations WHERE user_id=%s AND project_id=%s",
            (user["id"], project["id"]), one=True)
    return row["access_level"] if row else 0


def can_read(user, project):
    if project["visibility_level"] == 20:
        return True
    if not user:
        return False
    if user["admin"] or project["visibility_level"] == 10:
        return True
    return access_level(user, project) >= 10


def can_write(user, project, level=30):
    return bool(user) and (user["admin"] or access_level(user, project) >= level)


def refresh_authorizations(project_id):
    """Recompute project_authorizations for one project (GitLab does it in Sidekiq)."""
    x("DELETE FROM project_authorizations WHERE project_id=%s", (project_id,))
    x("""INSERT INTO project_authorizations (user_id, project_id, access_level)
         SELECT user_id, %s, max(lvl) FROM (
           SELECT user_id, access_level AS lvl FROM members WHERE source_type='Project' AND source_id=%s
             AND requested_at IS NULL AND user_id IS NOT NULL
           UNION ALL
           SELECT m.user_id, m.access_level FROM members m JOIN projects p ON p.namespace_id=m.source_id
             WHERE p.id=%s AND m.source_type='Namespace' AND m.requested_at IS NULL AND m.user_id IS NOT NULL
           UNION ALL
           SELECT n.owner_id, 50 FROM projects p JOIN namespaces n ON n.id=p.namespace_id
             WHERE p.id=%s AND n.type='User') s GROUP BY user_id""", (project_id, project_id, project_id, project_id))


def next_iid(project_id, usage):
    row = x("UPDATE internal_ids SET last_value=last_value+1 WHERE project_id=%s AND usage=%s RETURNING last_value",
            (project_id, usage))
    if row:
        return row["last_value"]
    table, col = {0: ("issues", "project_id"), 1: ("merge_requests", "target_project_id"),
                  3: ("milestones", "project_id")}[usage]
    cur = q(f"SELECT coalesce(max(iid),0) AS m FROM {table} WHERE {col}=%s", (project_id,), one=True)["m"]
    x("INSERT INTO internal_ids (project_id, usage, last_value) VALUES (%s,%s,%s)", (project_id, usage, cur + 1))
    return cur + 1


def project_members(project, inherited=True):
    """Direct project members plus (when inherited) members of the parent group, max level per user."""
    rows = q("""SELECT m.*, u.username, u.name, u.state, 'direct' AS via FROM members m JOIN users u ON u.id=m.user_id
                WHERE m.source_type='Project' AND m.source_id=%s AND m.requested_at IS NULL ORDER BY m.id""",
             (project["id"],))
    if inherited:
        rows += q("""SELECT m.*, u.username, u.name, u.state, 'inherited' AS via FROM members m JOIN users u ON u.id=m.user_id
                     WHERE m.source_type='Namespace' AND m.source_id=%s AND m.requested_at IS NULL ORDER BY m.id""",
                  (project["namespace_id"],))
        if project["ns_type"] == "User" and not any(r["user_id"] == project["ns_owner_id"] for r in rows):
            o = q("SELECT id AS user_id, username, name, state, created_at FROM users WHERE id=%s",
                  (project["ns_owner_id"],), one=True)
            o.update({"access_level": 50, "via": "owner", "expires_at": None, "id": None})
            rows.insert(0, o)
    best = {}
    for r in rows:
        if r["user_id"] not in best or r["access_level"] > best[r["user_id"]]["access_level"]:
            best[r["user_id"]] = r
    return list(best.values())


# ---------------------------------------------------------------- git
def repo_path(project_id):
    h = hashlib.sha256(str(project_id).encode()).hexdigest()
    return f"{REPOS}/@hashed/{h[0:2]}/{h[2:4]}/{h}.git"


def git(project_id, *args, input=None, check=False):
    p = subprocess.run(["git", "--git-dir", repo_path(project_id)] + list(args), input=input,
                       capture_output=True)
    if check and p.returncode:
        raise RuntimeError(p.stderr.decode(errors="replace"))
    return p


def git_out(project_id, *args):
    p = git(project_id, *args)
    return p.stdout.decode(errors="replace") if p.returncode == 0 else None


def branches(project_id):
    out = git_out(project_id, "for-each-ref", "--format=%(refname:short)", "refs/heads") or ""
    return [b for b in out.splitlines() if b]


def head_branch_if_any(project_id):
    """default_branch() when the repository has at least one branch, else None -- read from the
    files of the bare repo (HEAD, refs/heads, packed-refs) so API lists of 100 projects spawn no git."""
    repo = repo_path(project_id)
    try:
        head = open(os.path.join(repo, "HEAD")).read().strip()
    except OSError:
        return None
    if not head.startswith("ref: refs/heads/"):
        return default_branch(project_id) if branches(project_id) else None
    found = any(fs for _, _, fs in os.walk(os.path.join(repo, "refs", "heads")))
    if not found:
        try:
            found = any(" refs/heads/" in line for line in open(os.path.join(repo, "packed-refs")))
        except OSError:
            found = False
    return head[len("ref: refs/heads/"):] if found else None


def default_branch(project_id):
    out = git_out(project_id, "symbolic-ref", "--short", "HEAD")
    return out.strip() if out else None


def split_ref(project_id, rest):
    """Split 'github/fork/x/y/path/to/file' into (ref, path) using the longest existing ref."""
    parts = rest.split("/")
    refs = set(branches(project_id)) | set((git_out(project_id, "tag", "-l") or "").split())
    for i in range(len(parts), 0, -1):
        cand = "/".join(parts[:i])
        if cand in refs:
            return cand, "/".join(parts[i:])
    first = parts[0]
    if git(project_id, "rev-parse", "--verify", "-q", first + "^{commit}").returncode == 0:
        return first, "/".join(parts[1:])
    return None, None


def ls_tree(project_id, ref, path=""):
    spec = f"{ref}:{path}" if path else f"{ref}:"
    out = git_out(project_id, "ls-tree", "-z", spec)
    if out is None:
        return None
    items = []
    for ent in out.split("\0"):
        if not ent:
            continue
        meta, name = ent.split("\t", 1)
        mode, typ, sha = meta.split()
        items.append({"id": sha, "name": name, "type": typ, "mode": mode,
                      "path": f"{path}/{name}" if path else name})
    items.sort(key=lambda i: (i["type"] != "tree", i["name"].lower()))
    return items


def blob(project_id, ref, path):
    p = git(project_id, "cat-file", "-p", f"{ref}:{path}")
    if p.returncode:
        return None
    t = git_out(project_id, "cat-file", "-t", f"{ref}:{path}")
    return p.stdout if t and t.strip() == "blob" else None


def commits(project_id, ref, path=None, limit=40, offset=0):
    args = ["log", f"--max-count={limit}", f"--skip={offset}", "--format=%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%s%x00%P", ref]
    if path:
        args += ["--", path]
    out = git_out(project_id, *args) or ""
    res = []
    for line in out.splitlines():
        f = line.split("\0")
        if len(f) < 9:
            continue
        res.append({"id": f[0], "short_id": f[0][:8], "author_name": f[1], "author_email": f[2], "authored_date": f[3],
                    "committer_name": f[4], "committer_email": f[5], "committed_date": f[6], "created_at": f[6],
                    "title": f[7], "message": f[7] + "\n", "parent_ids": f[8].split()})
    return res


def write_commit(project_id, branch, start_branch, message, actions, author):
    """Create one commit on ``branch`` (from ``start_branch`` when new) applying file ``actions``
    (dicts with action create|update|delete, file_path, content). Uses git plumbing on the bare repo."""
    import tempfile
    base = branch if branch in branches(project_id) else (start_branch or default_branch(project_id))
    parent = None
    if base:
        out = git_out(project_id, "rev-parse", "--verify", "-q", f"refs/heads/{base}")
        parent = out.strip() if out else None
    with tempfile.TemporaryDirectory() as td:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(td, "index"),
                   GIT_AUTHOR_NAME=author["name"], GIT_AUTHOR_EMAIL=author["email"],
                   GIT_COMMITTER_NAME=author["name"], GIT_COMMITTER_EMAIL=author["email"])
        gd = ["git", "--git-dir", repo_path(project_id)]

        def run(*a, inp=None):
            p = subprocess.run(gd + list(a), input=inp, capture_output=True, env=env)
            if p.returncode:
                raise ValueError(p.stderr.decode(errors="replace").strip())
            return p.stdout.decode().strip()
        if parent:
            run("read-tree", parent)
        for a in actions:
            path = a["file_path"].strip("/")
            if a["action"] in ("create", "update"):
                exists = parent and git(project_id, "cat-file", "-e", f"{parent}:{path}").returncode == 0
                if a["action"] == "create" and exists:
                    raise ValueError("A file with this name already exists")
                if a["action"] == "update" and not exists:
                    raise ValueError("A file with this name doesn't exist")
                content = a.get("content") or ""
                data = base64.b64decode(content) if a.get("encoding") == "base64" else content.encode()
                sha = run("hash-object", "-w", "--stdin", inp=data)
                run("update-index", "--add", "--cacheinfo", f"100644,{sha},{path}")
            elif a["action"] == "delete":
                run("update-index", "--force-remove", path)
        tree = run("write-tree")
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        sha = run(*args)
        run("update-ref", f"refs/heads/{branch}", sha)
        if parent is None and len(branches(project_id)) == 1:
            run("symbolic-ref", "HEAD", f"refs/heads/{branch}")
    return sha
