"""SCALE=full bulk data for the GitLab contract replica (imported by seed.py after the tiny rows).

Adds generated users, groups, projects (real bare repositories built with `git fast-import`),
memberships, labels, milestones, issues, merge requests and notes at the real image's counts
(2,399 users, 175 projects). Deterministic from SEED: its own RNG (so the tiny rows, drawn
first from seed.py's RNG, are byte-identical to SCALE=tiny), fixed timestamps. Bulk ids start
at fixed bases far above the tiny ids; bulk rows never touch tiny users, groups or projects.
Rows go in with PostgreSQL COPY from in-memory buffers (no temp files).
"""
import concurrent.futures as cf, datetime as dt, io, os, random, subprocess

# The real image's counts (research/real-images.md §1.9: SBB's 2,399 users / 175 projects), tiny's included.
TOTAL_USERS = 2399
TOTAL_PROJECTS = 175
# ... and the least it holds of these, from WA-V's gitlab/scripts/90_verify.sh (research/real-images.md
# §1.9: namespaces, issues, merge requests, notes; contract-postmill-gitlab-map.md §2.1: members).
MINIMUMS = {"namespaces": 100, "issues": 1000, "merge_requests": 1000, "notes": 1000, "members": 10}
N_GROUPS = 60
# first id of the generated rows per table (tiny ids stay far below; checked at run time)
BASE = {"users": 1001, "namespaces": 10001, "projects": 1001, "routes": 10001, "members": 10001,
        "labels": 10001, "milestones": 10001, "issues": 100001, "merge_requests": 100001,
        "merge_request_metrics": 100001, "merge_request_assignees": 100001, "merge_request_reviewers": 100001,
        "notes": 1000001, "label_links": 1000001, "internal_ids": 10001, "project_statistics": 1001,
        "users_star_projects": 100001}

FIRST = ("James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan Joseph "
         "Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa Anthony Betty Mark Sandra Donald Ashley Steven "
         "Emily Paul Kimberly Andrew Donna Joshua Michelle Kevin Carol Brian Amanda George Melissa Timothy Deborah Wei "
         "Priya Arjun Mei Hiroshi Yuki Olga Ivan Fatima Omar Lucas Sofia Mateo Chloe Noah Emma Liam Ava Lars Ingrid "
         "Pierre Amelie Diego Lucia Kwame Amara Chen Ravi Ananya Sven Freya Tomasz Zofia").split()
LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson "
        "Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis "
        "Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera "
        "Campbell Mitchell Carter Roberts Wang Li Zhang Liu Chen Yang Kumar Singh Patel Sharma Tanaka Suzuki Sato "
        "Ivanov Petrov Novak Kowalski Muller Schmidt Schneider Fischer Weber Dubois Moreau Rossi Russo Silva Santos "
        "Oliveira Costa Andersen Nielsen Hansen Larsen Berg").split()
WORDS = ("atlas beacon cascade delta ember falcon glacier harbor iris jade kepler lumen meadow nebula orbit prism "
         "quartz raven summit tundra umbra vertex willow zephyr aurora bison cobalt dune echo fjord grove helix "
         "indigo juniper kite lotus maple nova onyx pixel quill ridge sierra talon vortex canyon comet ferret "
         "gecko heron lynx otter panda quokka tiger walrus yak").split()
TOPICS = ("parser scheduler cache logger router crawler bot dashboard toolkit sdk cli compiler linter formatter "
          "tracker monitor proxy gateway queue scraper notebook viewer editor generator validator converter "
          "bundler server client plugin theme template engine api wrapper analyzer benchmark emulator").split()
PREFIX = ["", "", "", "awesome-", "py", "go-", "node-", "react-", "vue-", "simple-", "tiny-", "open-", "fast-"]
SUFFIX = ["", "", "", "", "-js", "-py", "-rs", ".js", "-api", "-cli", "-core", "-lib", "-app", "-docs", "-kit"]
GROUP_SUFFIX = ["", "-labs", "-dev", "-org", "-io", "-team", "-project", "hq", "-oss", "-foundation"]
LABELS = [("bug", "#d9534f"), ("enhancement", "#5cb85c"), ("documentation", "#428bca"), ("question", "#8e44ad"),
          ("help wanted", "#009800"), ("good first issue", "#7057ff"), ("duplicate", "#cccccc"), ("wontfix", "#ffffff"),
          ("priority::high", "#ff0000"), ("priority::low", "#fef2c0"), ("performance", "#ad4363"), ("security", "#e11d21"),
          ("needs review", "#fbca04"), ("dependencies", "#0366d6"), ("breaking change", "#b60205")]
ISSUE_T = ["{T} crashes when {n} is empty", "Add support for {n} in the {t}", "{T}: wrong output for {n}",
           "Document the {n} option", "Improve {t} performance on large {n} files", "Typo in {n} section of README",
           "Feature request: {n} mode", "{T} fails to build on Windows", "Deprecation warning from {n}",
           "Unexpected {n} behaviour after upgrade", "Add tests for {n}", "Memory leak in {t} {n} handling",
           "Support configuring {n} via environment", "Broken link to {n} docs", "Migrate {n} to the new {t} API"]
MR_T = ["Fix {n} handling in {t}", "Add {n} option", "Refactor {t} {n} module", "Update {n} docs", "Bump {n} dependency",
        "Draft: rewrite {n}", "Improve {t} error messages", "Add CI job for {n}", "Remove deprecated {n}",
        "Speed up {n} lookup", "Add {n} example", "Resolve \"{T} fails on {n}\""]
NOTES = ["Thanks for the report!", "I can reproduce this on the latest version.", "LGTM :thumbsup:",
         "Could you add a test for this?", "Working on a fix.", "Merged, thanks for the contribution!",
         "Any update on this?", "This looks like a duplicate of an older issue.", "Can you share the full stack trace?",
         "Closing as fixed in the latest release.", "I left a few comments inline.", "Rebased on main, please take another look.",
         "+1, we hit this too.", "Good catch!", "Let's discuss this in the next sync."]
VERBS = "fix add update refactor remove improve support handle document rename cleanup optimize".split()


class Copier:
    """Collects rows per (table, column list) and writes them with COPY ... FROM STDIN (text format)."""

    def __init__(self):
        self.rows = {}

    def add(self, table, cols, row):
        self.rows.setdefault((table, cols), []).append(row)

    def table_rows(self, table):
        return [row for (t, _), rows in self.rows.items() if t == table for row in rows]

    @staticmethod
    def fmt(v):
        if v is None:
            return r"\N"
        if v is True:
            return "t"
        if v is False:
            return "f"
        if isinstance(v, (dt.datetime, dt.date)):
            return v.isoformat()
        if isinstance(v, (list, tuple)):
            return "{" + ",".join(str(i) for i in v) + "}"
        s = str(v)
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")

    def flush(self, cur, table):
        n = 0
        for key in [k for k in self.rows if k[0] == table]:
            rows = self.rows.pop(key)
            buf = io.StringIO("".join("\t".join(self.fmt(v) for v in r) + "\n" for r in rows))
            cur.copy_expert(f"COPY {table} ({', '.join(key[1])}) FROM STDIN", buf)
            n += len(rows)
        return n


def seed_full(cur, seed, ts, hashed_path, password_hash, base_time):
    r = random.Random(f"sitectl-gitlab-full:{seed}")
    for t, b in BASE.items():
        cur.execute(f"SELECT coalesce(max(id), 0) FROM {t}")
        assert cur.fetchone()[0] < b, f"tiny ids of {t} reach the bulk base {b}"
    cur.execute("SELECT lower(path) FROM routes")
    taken = {row[0] for row in cur.fetchall()}
    cur.execute("SELECT count(*) FROM users")
    n_bulk_users = TOTAL_USERS - cur.fetchone()[0]
    cur.execute("SELECT count(*) FROM projects")
    n_bulk_projects = TOTAL_PROJECTS - cur.fetchone()[0]
    C = Copier()
    ids = dict(BASE)

    def nid(t):
        ids[t] += 1
        return ids[t] - 1

    def when(d0, d1):
        return ts(days=r.randint(d0, d1), minutes=r.randint(0, 1439))

    # ---------------------------------------------------------------- users
    users = []   # dicts id, username, name, email, ns
    for _ in range(n_bulk_users):
        while True:
            f, l = r.choice(FIRST), r.choice(LAST)
            style = r.random()
            un = (f"{f}{l}" if style < .2 else f"{f[0]}{l}".lower() if style < .45 else f"{f}.{l}".lower() if style < .6
                  else f"{f}_{l}{r.randint(1, 99)}".lower() if style < .8 else f"{f.lower()}{r.randint(1, 9999)}")
            if un.lower() not in taken:
                break
        taken.add(un.lower())
        u = {"id": nid("users"), "username": un, "name": f"{f} {l}", "email": f"{un.lower()}@example.com",
             "ns": nid("namespaces"), "created": when(-1400, -120)}
        users.append(u)
        C.add("users", ("id", "email", "encrypted_password", "username", "name", "admin", "confirmed_at", "created_at",
                        "updated_at", "location", "website_url", "bio"),
              (u["id"], u["email"], password_hash, un, u["name"], False, u["created"], u["created"], u["created"],
               r.choice(["", "", "", "Berlin", "San Francisco", "London", "Bangalore", "Tokyo", "Toronto", "Paris", "Remote"]),
               "", r.choice(["", "", "Software engineer", "Open source enthusiast", "Backend developer", "Student"])))
        C.add("user_details", ("user_id",), (u["id"],))
        C.add("namespaces", ("id", "name", "path", "owner_id", "type", "visibility_level", "traversal_ids", "created_at",
                             "updated_at"), (u["ns"], u["name"], un, u["id"], "User", 20, [u["ns"]], u["created"], u["created"]))
        C.add("routes", ("id", "source_id", "source_type", "path", "name", "namespace_id", "created_at", "updated_at"),
              (nid("routes"), u["ns"], "Namespace", un, u["name"], u["ns"], u["created"], u["created"]))
    MEM = ("id", "access_level", "source_id", "source_type", "user_id", "type", "member_namespace_id", "created_by_id",
           "created_at", "updated_at")

    # ---------------------------------------------------------------- groups
    groups = []
    for _ in range(N_GROUPS):
        while True:
            gp = r.choice(WORDS) + r.choice(GROUP_SUFFIX)
            gp = gp.capitalize() if r.random() < .3 else gp
            if gp.lower() not in taken:
                break
        taken.add(gp.lower())
        gid, created = nid("namespaces"), when(-1300, -200)
        owner = r.choice(users)
        grp = {"id": gid, "path": gp, "members": {owner["id"]: 50}}
        for m in r.sample(users, r.randint(1, 12)):
            grp["members"].setdefault(m["id"], r.choice([10, 20, 30, 30, 30, 40]))
        groups.append(grp)
        C.add("namespaces", ("id", "name", "path", "owner_id", "type", "visibility_level", "traversal_ids", "created_at",
                             "updated_at", "description"), (gid, gp, gp, None, "Group", 20, [gid], created, created,
                                                            f"The {gp} community"))
        C.add("routes", ("id", "source_id", "source_type", "path", "name", "namespace_id", "created_at", "updated_at"),
              (nid("routes"), gid, "Namespace", gp, gp, gid, created, created))
        for uid_, lvl in grp["members"].items():
            C.add("members", MEM, (nid("members"), lvl, gid, "Namespace", uid_, "GroupMember", gid, owner["id"], created, created))
    by_id = {u["id"]: u for u in users}

    # ---------------------------------------------------------------- projects and everything in them
    repo_jobs = []
    projects = []
    for k in range(n_bulk_projects):
        in_group = r.random() < 0.55
        owner_ns = r.choice(groups) if in_group else r.choice(users)
        ns_path, ns_id = (owner_ns["path"], owner_ns["id"]) if in_group else (owner_ns["username"], owner_ns["ns"])
        while True:
            path = r.choice(PREFIX) + r.choice(TOPICS if r.random() < .5 else WORDS) + r.choice(SUFFIX)
            if r.random() < .25:
                path = f"{r.choice(WORDS)}-{path}"
            full = f"{ns_path}/{path}"
            if full.lower() not in taken:
                break
        taken.add(full.lower())
        pid, pns = nid("projects"), nid("namespaces")
        created = when(-1200, -60)
        vis = r.choices([20, 0, 10], [75, 15, 10])[0]
        branch = "main" if r.random() < .6 else "master"
        kind = r.choice(["python", "js", "go", "web"])
        creator = r.choice(list(owner_ns["members"])) if in_group else owner_ns["id"]
        # direct members (user projects: owner + collaborators; group projects: a few extra developers)
        direct = {} if in_group else {owner_ns["id"]: 50}
        for m in r.sample(users, r.choice([0, 0, 1, 2, 3, 5, 8])):
            direct.setdefault(m["id"], r.choice([10, 20, 30, 30, 40]))
        inherited = owner_ns["members"] if in_group else {}
        members = dict(inherited)
        for u_, l_ in direct.items():
            members[u_] = max(members.get(u_, 0), l_)
        member_ids = sorted(members)
        big = r.random() < 0.06
        n_issues = r.randint(120, 400) if big else int(r.random() ** 2 * 30)
        n_mrs = r.randint(40, 150) if big else int(r.random() ** 2 * 18)
        n_commits = r.randint(200, 600) if big else int(10 + 240 * r.random() ** 2.2)
        last_act = when(-60, 100)
        p = {"id": pid, "path": path, "full": full, "ns_id": ns_id, "branch": branch, "kind": kind, "created": created,
             "members": member_ids, "n_commits": n_commits}
        projects.append(p)
        C.add("namespaces", ("id", "name", "path", "owner_id", "type", "parent_id", "visibility_level", "traversal_ids",
                             "created_at", "updated_at"), (pns, path, path, None, "Project", ns_id, vis, [ns_id, pns], created, created))
        desc = r.choice(["A {t} for {w} projects", "Lightweight {t} written in {k}", "{W}: a fast {t}",
                         "Experimental {t} based on {w}", "Yet another {t}", "The {w} {t}", ""]).format(
            t=r.choice(TOPICS), w=r.choice(WORDS), W=r.choice(WORDS).capitalize(), k=kind)
        C.add("projects", ("id", "name", "path", "description", "namespace_id", "creator_id", "visibility_level",
                           "star_count", "project_namespace_id", "created_at", "updated_at", "last_activity_at",
                           "last_repository_updated_at"),
              [pid, path, path, desc, ns_id, creator, vis, 0, pns, created, created, last_act, last_act])
        C.add("routes", ("id", "source_id", "source_type", "path", "name", "namespace_id", "created_at", "updated_at"),
              (nid("routes"), pid, "Project", full, f"{ns_path} / {path}", ns_id, created, created))
        for u_, l_ in sorted(direct.items()):
            C.add("members", MEM, (nid("members"), l_, pid, "Project", u_, "ProjectMember", pns, creator, created, created))
        # labels, milestones
        labels = [(nid("labels"), t) for t, _ in r.sample(LABELS, r.randint(3, 9))]
        colors = dict(LABELS)
        for lid, t in labels:
            C.add("labels", ("id", "title", "color", "project_id", "type", "created_at", "updated_at"),
                  (lid, t, colors[t], pid, "ProjectLabel", created, created))
        n_ms = r.choice([0, 0, 1, 2, 3, 5]) if n_issues else 0
        ms_ids = []
        for mi in range(1, n_ms + 1):
            mid_ = nid("milestones")
            ms_ids.append(mid_)
            start = when(-600, 60)
            C.add("milestones", ("id", "iid", "title", "project_id", "description", "start_date", "due_date", "state",
                                 "created_at", "updated_at"),
                  (mid_, mi, f"v{mi}.0" if r.random() < .6 else f"Sprint {mi}", pid, "", start.date(),
                   (start + dt.timedelta(days=r.randint(14, 90))).date(), "closed" if start < ts(-120) else "active",
                   created, created))
        if n_ms:
            C.add("internal_ids", ("id", "project_id", "usage", "last_value"), (nid("internal_ids"), pid, 3, n_ms))
        pool = member_ids + [u["id"] for u in r.sample(users, 6)]

        def title(tpl):
            return tpl.format(T=r.choice(TOPICS).capitalize(), t=r.choice(TOPICS), n=r.choice(WORDS + TOPICS))

        def notes_for(ttype, tid, t0, n):
            for j in range(n):
                at = t0 + dt.timedelta(hours=r.randint(1, 24 * 20) + j)
                C.add("notes", ("id", "note", "noteable_type", "noteable_id", "author_id", "project_id", "discussion_id",
                                "created_at", "updated_at"),
                      (nid("notes"), r.choice(NOTES), ttype, tid, r.choice(pool), pid, "%040x" % r.getrandbits(160), at, at))
        # issues
        for iid in range(1, n_issues + 1):
            iid_row = nid("issues")
            t0 = when(max(-1100, (created - base_time).days), 90)
            closed = r.random() < 0.35
            tt = title(r.choice(ISSUE_T))
            C.add("issues", ("id", "iid", "project_id", "title", "description", "author_id", "milestone_id", "state_id",
                             "due_date", "closed_at", "created_at", "updated_at", "work_item_type_id"),
                  (iid_row, iid, pid, tt, f"### Summary\n\n{tt}.\n\n### Steps to reproduce\n\n1. Install {path}\n2. Run it\n",
                   r.choice(pool), r.choice(ms_ids) if ms_ids and r.random() < .3 else None, 2 if closed else 1,
                   (t0 + dt.timedelta(days=r.randint(7, 60))).date() if r.random() < .1 else None,
                   t0 + dt.timedelta(days=r.randint(1, 40)) if closed else None, t0, t0 + dt.timedelta(days=r.randint(0, 40)), 1))
            if r.random() < .4:
                C.add("issue_assignees", ("user_id", "issue_id"), (r.choice(member_ids), iid_row))
            for lid, _ in r.sample(labels, r.choice([0, 0, 1, 1, 1, 2])):
                C.add("label_links", ("id", "label_id", "target_id", "target_type", "created_at", "updated_at"),
                      (nid("label_links"), lid, iid_row, "Issue", t0, t0))
            notes_for("Issue", iid_row, t0, r.choice([0, 0, 1, 1, 2, 3, 5]))
        if n_issues:
            C.add("internal_ids", ("id", "project_id", "usage", "last_value"), (nid("internal_ids"), pid, 0, n_issues))
        # merge requests (one commit per source branch, created in the repository)
        mr_branches = []
        for iid in range(1, n_mrs + 1):
            mr_id = nid("merge_requests")
            t0 = when(max(-900, (created - base_time).days), 90)
            state = r.choices([1, 2, 3], [30, 15, 55])[0]
            tt = title(r.choice(MR_T))
            src = f"{r.choice(VERBS)}-{r.choice(WORDS + TOPICS)}-{iid}"
            mr_branches.append(src)
            author = r.choice(pool)
            C.add("merge_requests", ("id", "iid", "target_project_id", "source_project_id", "source_branch", "target_branch",
                                     "title", "description", "author_id", "state_id", "merge_status", "draft",
                                     "merge_user_id", "created_at", "updated_at"),
                  (mr_id, iid, pid, pid, src, branch, tt, f"This MR: {tt.lower()}.\n\nCloses #{r.randint(1, max(1, n_issues))}"
                   if n_issues else f"This MR: {tt.lower()}.", author, state, "can_be_merged", tt.startswith("Draft:"),
                   r.choice(member_ids) if state == 3 else None, t0, t0 + dt.timedelta(days=r.randint(0, 30))))
            merged_at = t0 + dt.timedelta(days=r.randint(1, 30)) if state == 3 else None
            C.add("merge_request_metrics", ("id", "merge_request_id", "merged_by_id", "merged_at", "latest_closed_by_id",
                                            "latest_closed_at", "target_project_id", "created_at", "updated_at"),
                  (nid("merge_request_metrics"), mr_id, r.choice(member_ids) if state == 3 else None, merged_at,
                   r.choice(member_ids) if state == 2 else None, t0 + dt.timedelta(days=5) if state == 2 else None,
                   pid, t0, t0))
            if r.random() < .5:
                C.add("merge_request_assignees", ("id", "user_id", "merge_request_id", "created_at"),
                      (nid("merge_request_assignees"), author, mr_id, t0))
            if r.random() < .6:
                rv = r.choice(member_ids)
                if rv != author:
                    C.add("merge_request_reviewers", ("id", "user_id", "merge_request_id", "created_at"),
                          (nid("merge_request_reviewers"), rv, mr_id, t0))
            for lid, _ in r.sample(labels, r.choice([0, 0, 1])):
                C.add("label_links", ("id", "label_id", "target_id", "target_type", "created_at", "updated_at"),
                      (nid("label_links"), lid, mr_id, "MergeRequest", t0, t0))
            notes_for("MergeRequest", mr_id, t0, r.choice([1, 1, 2, 3, 4, 6]))
        if n_mrs:
            C.add("internal_ids", ("id", "project_id", "usage", "last_value"), (nid("internal_ids"), pid, 1, n_mrs))
        extra = [f"{r.choice(['develop', 'release-1.x', 'gh-pages', 'next', 'staging'])}"] if r.random() < .3 else []
        authors = [(by_id[m]["name"], by_id[m]["email"]) for m in member_ids] + \
                  [(u["name"], u["email"]) for u in r.sample(users, 3)]
        repo_jobs.append((p, mr_branches + extra, authors, r.getrandbits(64)))

    # stars (star_count = number of star rows) and follows among generated users
    for p in projects:
        n = min(len(users) - 1, int(r.paretovariate(1.0)) - 1 if r.random() < .8 else int(r.paretovariate(0.5)))
        n = min(n, 600)
        for u in r.sample(users, n):
            t_ = when(-400, 90)
            C.add("users_star_projects", ("id", "project_id", "user_id", "created_at", "updated_at"),
                  (nid("users_star_projects"), p["id"], u["id"], t_, t_))
        p["stars"] = n
    star_of = {p["id"]: p["stars"] for p in projects}
    for row in C.table_rows("projects"):
        row[7] = star_of[row[0]]
    follows = set()
    for u in users:
        for v in r.sample(users, r.choice([0, 0, 0, 1, 2, 4, 8])):
            if v["id"] != u["id"]:
                follows.add((u["id"], v["id"]))
    for a, b in sorted(follows):
        C.add("user_follow_users", ("follower_id", "followee_id"), (a, b))

    counts = {}
    for t in ("users", "user_details", "namespaces", "routes", "members", "projects", "labels", "milestones",
              "internal_ids", "issues", "issue_assignees", "merge_requests", "merge_request_metrics",
              "merge_request_assignees", "merge_request_reviewers", "label_links", "notes", "users_star_projects",
              "user_follow_users"):
        counts[t] = C.flush(cur, t)

    # repositories: one fast-import per project, two at a time
    def build(job):
        p, branches, authors, rs = job
        repo = hashed_path(p["id"])
        os.makedirs(os.path.dirname(repo), exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
        stream, ncommits = repo_stream(random.Random(rs), p, branches, authors, ts)
        subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=stream, check=True)
        subprocess.run(["git", "-C", repo, "symbolic-ref", "HEAD", f"refs/heads/{p['branch']}"], check=True)
        subprocess.run(["git", "-C", repo, "config", "gitlab.fullpath", p["full"]], check=True)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(repo) for f in fs)
        return p, ncommits, size

    with cf.ThreadPoolExecutor(max_workers=3) as ex:
        built = list(ex.map(build, repo_jobs))
    for p, ncommits, size in built:
        C.add("project_statistics", ("id", "project_id", "namespace_id", "commit_count", "repository_size", "storage_size"),
              (nid("project_statistics"), p["id"], p["ns_id"], ncommits, size, size))
    counts["project_statistics"] = C.flush(cur, "project_statistics")
    cur.execute("""INSERT INTO project_authorizations (user_id, project_id, access_level)
        SELECT user_id, project_id, max(lvl) FROM (
          SELECT m.user_id, m.source_id AS project_id, m.access_level AS lvl FROM members m
            WHERE m.source_type='Project' AND m.requested_at IS NULL AND m.source_id >= %(p)s
          UNION ALL
          SELECT m.user_id, p.id, m.access_level FROM members m JOIN projects p ON p.namespace_id = m.source_id
            WHERE m.source_type='Namespace' AND m.requested_at IS NULL AND p.id >= %(p)s
          UNION ALL
          SELECT n.owner_id, p.id, 50 FROM projects p JOIN namespaces n ON n.id = p.namespace_id
            WHERE n.type='User' AND p.id >= %(p)s) s GROUP BY user_id, project_id""", {"p": BASE["projects"]})
    # sequences past the max ids (bulk ids were given explicitly)
    cur.execute("""SELECT table_name FROM information_schema.columns WHERE table_schema='public' AND column_name='id'
                   AND column_default LIKE 'nextval%%'""")
    for (t,) in cur.fetchall():
        cur.execute(f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), greatest((SELECT max(id) FROM {t}), 1))")
    # The real image's minimums a peer's verify script checks (research/real-images.md §1.9).
    for t, least in MINIMUMS.items():
        cur.execute(f"SELECT count(*) FROM {t}")
        n = cur.fetchone()[0]
        assert n >= least, f"full scale: {t} has {n} rows, the real image at least {least}"
    return counts, sum(b[1] for b in built), sum(b[2] for b in built)


# ---------------------------------------------------------------- repository content
def _code_line(r, kind, n):
    w, t = r.choice(WORDS), r.choice(TOPICS)
    if kind == "python":
        return f"def {w}_{t}_{n}(value):\n    return value * {r.randint(2, 99)}  # {t}\n"
    if kind == "js":
        return f"export function {w}{t.capitalize()}{n}(value) {{\n  return value * {r.randint(2, 99)}; // {t}\n}}\n"
    if kind == "go":
        return f"func {w.capitalize()}{t.capitalize()}{n}(v int) int {{\n\treturn v * {r.randint(2, 99)} // {t}\n}}\n"
    return f"<p class=\"{w}\">{t.capitalize()} section {n}</p>\n"


def _files(kind, name):
    pkg = "".join(c for c in name.lower() if c.isalnum()) or "pkg"
    common = ["README.md", "LICENSE", ".gitignore", "CHANGELOG.md"]
    return common + {
        "python": ["setup.py", "requirements.txt", f"{pkg}/__init__.py", f"{pkg}/core.py", f"{pkg}/utils.py",
                   "tests/test_core.py", "docs/usage.md"],
        "js": ["package.json", "src/index.js", "src/utils.js", "src/cli.js", "test/index.test.js", "docs/usage.md"],
        "go": ["go.mod", "main.go", f"internal/{pkg}/{pkg}.go", f"internal/{pkg}/{pkg}_test.go", "Makefile"],
        "web": ["index.html", "css/style.css", "js/main.js", "docs/guide.md", "_config.yml"],
    }[kind]


def repo_stream(r, p, branches, authors, ts):
    """fast-import stream: linear history on the default branch (n_commits), then one commit per extra branch."""
    name = p["path"]
    files = _files(p["kind"], name)
    code = [f for f in files if f.endswith((".py", ".js", ".go", ".html", ".css"))]
    content = {f: [f"# {name}\n\n{f} of {name}.\n" if f.endswith(".md") else
                   "MIT License\n\nCopyright (c) 2020 the authors\n" if f == "LICENSE" else f"// {f}\n"] for f in files}
    out = []

    def data(s):
        b = s.encode()
        return b"data %d\n" % len(b) + b + b"\n"

    t = int(p["created"].timestamp())
    end = int(ts(days=90).timestamp())
    step = max(60, (end - t) // (p["n_commits"] + 1))
    mark = 0
    for i in range(p["n_commits"]):
        mark += 1
        t += r.randint(step // 4, step * 7 // 4) if i else 0
        t = min(t, end - 3600 * (p["n_commits"] - i))
        an, am = authors[0] if i == 0 else r.choice(authors)
        if i == 0:
            changed, msg = files, "Initial commit"
        else:
            f = r.choice(code) if r.random() < .75 else r.choice(files)
            content[f].append(_code_line(r, p["kind"], i) if f in code else f"- {r.choice(VERBS)} {r.choice(TOPICS)} ({i})\n")
            changed = [f]
            msg = r.choice(["{V} {t} in {f}", "{V} {t}", "Update {f}", "{V} {w} {t} handling", "Bump version to 1.{i}.0",
                            "Merge fixes for {t}", "{V} typo in {f}"]).format(
                V=r.choice(VERBS).capitalize(), t=r.choice(TOPICS), w=r.choice(WORDS), f=os.path.basename(f), i=i)
        out.append(b"commit refs/heads/%s\nmark :%d\n" % (p["branch"].encode(), mark))
        out.append(f"author {an} <{am}> {t} +0000\ncommitter {an} <{am}> {t} +0000\n".encode())
        out.append(data(msg + "\n"))
        if i:
            out.append(b"from :%d\n" % (mark - 1))
        for f in changed:
            out.append(f"M 100644 inline {f}\n".encode())
            out.append(data("".join(content[f])))
    tip = mark
    for b in branches:
        mark += 1
        an, am = r.choice(authors)
        bt = t + r.randint(60, 86400)
        out.append(f"commit refs/heads/{b}\nmark :{mark}\n".encode())
        out.append(f"author {an} <{am}> {bt} +0000\ncommitter {an} <{am}> {bt} +0000\n".encode())
        out.append(data(f"Work on {b}\n"))
        out.append(b"from :%d\n" % r.randint(max(1, tip - 20), tip))
        f = r.choice(code)
        out.append(f"M 100644 inline {f}\n".encode())
        out.append(data("".join(content[f]) + _code_line(r, p["kind"], 9000 + mark)))
    out.append(b"done\n")
    return b"".join(out), p["n_commits"] + len(branches)
