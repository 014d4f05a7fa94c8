"""Realistic GitLab mutations and read-backs through the site's own HTTP endpoints.

Every function acts like a browser user or a real API client of GitLab CE, so it works
against the real WebArena image (``gitlab-populated-final-port8023``) and the sitectl replica
(``sitectl/mini-gitlab``) alike:

- web forms: GET the form page, take its ``authenticity_token``, POST the form
  (``issue[title]``/``issue[description]`` to ``/<ns>/<proj>/-/issues``; ``merge_request[...]`` to
  ``/<ns>/<proj>/-/merge_requests``);
- REST API v4 with the *session cookie* plus the ``X-CSRF-Token`` header taken from the page's
  ``<meta name="csrf-token">`` — what GitLab's own frontend does (e.g. the "Invite members"
  modal posts ``/api/v4/projects/:id/invitations``); a ``PRIVATE-TOKEN`` works too (``token=``);
- git smart HTTP (``git push`` to ``<GITLAB>/<ns>/<proj>.git`` with basic auth).

Sources: research/contract-postmill-gitlab-map.md §2.2 (sign-in form, ``_gitlab_session``,
429 throttling after 10 sign-in POSTs/min/IP), §2.3 (API), §2.4 (members DOM, URL shapes),
§2.6 (repositories); webarena-official.md §4.5 (``gitlab_get_project_memeber_role``).
Accounts: ``byteblaze``/``hello1234`` (WebArena); in the replica every seeded user has
password ``hello1234`` and ``root`` is the admin (docs/contracts/gitlab.md).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from html.parser import HTMLParser
from urllib.parse import quote, urlsplit

import requests

UA = "Mozilla/5.0 (X11; Linux x86_64) sitectl-actions"
ACCESS_LEVELS = {"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40, "owner": 50}
_TOKEN_RE = re.compile(r'<input[^>]*name="authenticity_token"[^>]*value="([^"]+)"')
_META_RE = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


class ActionError(RuntimeError):
    """The site refused an action (bad credentials, form errors, unexpected status)."""


def _pid(project_path: str) -> str:
    return quote(project_path, safe="")


def login(base_url: str, username: str, password: str) -> requests.Session:
    """Sign in through ``/users/sign_in`` like a browser.

    Returns a ``requests.Session`` holding ``_gitlab_session`` whose ``X-CSRF-Token`` header is
    set (so it can also call the REST API as the GitLab frontend does).
    Raises ActionError on refused credentials or HTTP 429 (protected-paths throttle).
    """
    s = requests.Session()
    s.headers["User-Agent"] = UA
    page = s.get(base_url + "/users/sign_in", timeout=30)
    m = _TOKEN_RE.search(page.text)
    if page.status_code != 200 or not m:
        raise ActionError(f"sign-in page: HTTP {page.status_code}, token {'found' if m else 'missing'}")
    r = s.post(base_url + "/users/sign_in", data={"authenticity_token": m.group(1), "user[login]": username,
               "user[password]": password, "user[remember_me]": "0"}, allow_redirects=False, timeout=30)
    if r.status_code not in (302, 303) or "/users/sign_in" in r.headers.get("Location", ""):
        raise ActionError(f"sign-in of {username} refused: HTTP {r.status_code}")
    _refresh_csrf(s, base_url)
    return s


def _refresh_csrf(s: requests.Session, base_url: str, html: str | None = None) -> None:
    if html is None:
        html = s.get(base_url + "/-/profile", timeout=30).text
    m = _META_RE.search(html)
    if m:
        s.headers["X-CSRF-Token"] = m.group(1)


def _api(base_url, auth, method, path, **kw):
    """Call /api/v4 with a logged-in session (cookie + CSRF header) or a token string."""
    if isinstance(auth, requests.Session):
        r = auth.request(method, base_url + "/api/v4" + path, timeout=30, **kw)
    else:
        r = requests.request(method, base_url + "/api/v4" + path, headers={"PRIVATE-TOKEN": auth}, timeout=30, **kw)
    if r.status_code >= 400:
        raise ActionError(f"{method} /api/v4{path}: HTTP {r.status_code} {r.text[:200]}")
    return r.json() if r.content else None


def _form_post(s: requests.Session, base_url: str, form_url: str, action_path: str, data: dict) -> requests.Response:
    page = s.get(base_url + form_url, timeout=30)
    m = _TOKEN_RE.search(page.text)
    if page.status_code != 200 or not m:
        raise ActionError(f"GET {form_url}: HTTP {page.status_code}, no authenticity_token")
    return s.post(base_url + action_path, data={"authenticity_token": m.group(1), **data}, allow_redirects=False, timeout=30)


# ---------------------------------------------------------------- mutations
def create_issue(base_url: str, username: str, password: str, project_path: str, title: str,
                 description: str = "") -> int:
    """Create an issue through the "New issue" web form of ``project_path`` (e.g.
    ``"byteblaze/dotfiles"``). Returns the new issue's ``iid`` (from the 302 Location
    ``/<ns>/<proj>/-/issues/<iid>``)."""
    s = login(base_url, username, password)
    r = _form_post(s, base_url, f"/{project_path}/-/issues/new", f"/{project_path}/-/issues",
                   {"issue[title]": title, "issue[description]": description})
    m = re.search(r"/-/issues/(\d+)$", urlsplit(r.headers.get("Location", "")).path)
    if r.status_code != 302 or not m:
        raise ActionError(f"create issue in {project_path}: HTTP {r.status_code}")
    return int(m.group(1))


def create_issue_api(base_url: str, auth, project_path: str, title: str, description: str = "") -> int:
    """Create an issue with ``POST /api/v4/projects/:id/issues``; ``auth`` is a logged-in session
    from ``login`` or a personal access token. Returns the ``iid``."""
    return _api(base_url, auth, "POST", f"/projects/{_pid(project_path)}/issues",
                data={"title": title, "description": description})["iid"]


def create_branch_with_commit(base_url: str, auth, project_path: str, branch: str, file_path: str, content: str,
                              message: str = "Add file", start_branch: str | None = None) -> str:
    """Create ``branch`` (from ``start_branch`` or the default branch) with one commit that
    creates ``file_path`` (``POST /api/v4/projects/:id/repository/commits``). Returns the SHA."""
    proj = _api(base_url, auth, "GET", f"/projects/{_pid(project_path)}")
    body = {"branch": branch, "start_branch": start_branch or proj["default_branch"], "commit_message": message,
            "actions": [{"action": "create", "file_path": file_path, "content": content}]}
    return _api(base_url, auth, "POST", f"/projects/{_pid(project_path)}/repository/commits", json=body)["id"]


def open_merge_request(base_url: str, username: str, password: str, project_path: str, source_branch: str,
                       target_branch: str | None = None, title: str | None = None, description: str = "",
                       create_source: bool = True) -> int:
    """Open a merge request through the "New merge request" web form.

    When ``create_source`` is true and ``source_branch`` does not exist yet, it is first created
    with one commit (API, session auth) adding ``notes/<source_branch>.md``. ``target_branch``
    defaults to the project's default branch. Returns the MR ``iid``.
    """
    s = login(base_url, username, password)
    proj = _api(base_url, s, "GET", f"/projects/{_pid(project_path)}")
    target_branch = target_branch or proj["default_branch"]
    if create_source:
        names = [b["name"] for b in _api(base_url, s, "GET", f"/projects/{proj['id']}/repository/branches",
                                         params={"per_page": 100})]
        if source_branch not in names:
            create_branch_with_commit(base_url, s, project_path, source_branch,
                                      f"notes/{source_branch.replace('/', '-')}.md", f"Work on {source_branch}\n",
                                      f"Start {source_branch}", target_branch)
    form = (f"/{project_path}/-/merge_requests/new?merge_request%5Bsource_branch%5D={quote(source_branch)}"
            f"&merge_request%5Btarget_branch%5D={quote(target_branch)}")
    r = _form_post(s, base_url, form, f"/{project_path}/-/merge_requests", {
        "merge_request[source_branch]": source_branch, "merge_request[target_branch]": target_branch,
        "merge_request[source_project_id]": proj["id"], "merge_request[target_project_id]": proj["id"],
        "merge_request[title]": title or f"Merge {source_branch} into {target_branch}",
        "merge_request[description]": description})
    m = re.search(r"/-/merge_requests/(\d+)$", urlsplit(r.headers.get("Location", "")).path)
    if r.status_code != 302 or not m:
        raise ActionError(f"open MR in {project_path}: HTTP {r.status_code}")
    return int(m.group(1))


def add_project_member(base_url: str, username: str, password: str, project_path: str, member_username: str,
                       role: str = "guest") -> int:
    """Add ``member_username`` to ``project_path`` with ``role`` (guest|reporter|developer|
    maintainer|owner) the way the "Invite members" modal does: look the user up
    (``GET /api/v4/users?username=``) and ``POST /api/v4/projects/:id/invitations`` with the
    session cookie and CSRF header. Returns the access level (10..50)."""
    level = ACCESS_LEVELS[role.lower()]
    s = login(base_url, username, password)
    users = _api(base_url, s, "GET", "/users", params={"username": member_username})
    if not users:
        raise ActionError(f"no user {member_username}")
    res = _api(base_url, s, "POST", f"/projects/{_pid(project_path)}/invitations",
               data={"user_id": str(users[0]["id"]), "access_level": level})
    if res.get("status") != "success":
        raise ActionError(f"invite {member_username}: {res}")
    return level


def push_commit(base_url: str, username: str, password: str, project_path: str, branch: str, file_path: str,
                content: str, message: str = "Update file", author_email: str | None = None) -> str:
    """Clone ``project_path`` over git smart HTTP (basic auth), commit ``file_path`` with
    ``content`` on ``branch`` (created from the default branch if missing) and push. Needs the
    ``git`` CLI. Returns the pushed commit SHA."""
    u = urlsplit(base_url)
    url = f"{u.scheme}://{quote(username, safe='')}:{quote(password, safe='')}@{u.netloc}/{project_path}.git"
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true")
    with tempfile.TemporaryDirectory() as td:
        def git(*args):
            p = subprocess.run(["git", "-c", "credential.helper=", *args], cwd=td, env=env, capture_output=True, text=True)
            if p.returncode:
                raise ActionError(f"git {args[0]}: {p.stderr.strip()[-300:]}")
            return p.stdout.strip()
        git("clone", "-q", url, "repo")
        repo = os.path.join(td, "repo")
        remote_branches = git("-C", repo, "branch", "-r")
        if f"origin/{branch}" in remote_branches.split():
            git("-C", repo, "checkout", "-q", branch)
        else:
            git("-C", repo, "checkout", "-q", "-b", branch)
        path = os.path.join(repo, file_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
        git("-C", repo, "add", file_path)
        git("-C", repo, "-c", f"user.name={username}", "-c", f"user.email={author_email or username + '@example.com'}",
            "commit", "-q", "-m", message)
        git("-C", repo, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return git("-C", repo, "rev-parse", "HEAD")


def add_note(base_url: str, auth, project_path: str, kind: str, iid: int, body: str) -> int:
    """Comment on an issue (``kind="issues"``) or MR (``"merge_requests"``) via the API.
    Returns the note id."""
    return _api(base_url, auth, "POST", f"/projects/{_pid(project_path)}/{kind}/{iid}/notes", data={"body": body})["id"]


# ---------------------------------------------------------------- read-backs
def get_issue(base_url: str, auth, project_path: str, iid: int) -> dict:
    """``GET /api/v4/projects/:id/issues/:iid`` → the issue entity (title, state, author, ...)."""
    return _api(base_url, auth, "GET", f"/projects/{_pid(project_path)}/issues/{iid}")


def get_merge_request(base_url: str, auth, project_path: str, iid: int) -> dict:
    """``GET /api/v4/projects/:id/merge_requests/:iid`` → the MR entity (source/target branch, state)."""
    return _api(base_url, auth, "GET", f"/projects/{_pid(project_path)}/merge_requests/{iid}")


def issue_title_on_page(base_url: str, session: requests.Session, project_path: str, iid: int) -> str:
    """Text of ``[data-qa-selector="title_content"]`` on the issue page (the hook WebArena's
    evaluators read)."""
    html = session.get(f"{base_url}/{project_path}/-/issues/{iid}", timeout=30).text
    m = re.search(r'data-qa-selector="title_content"[^>]*>(.*?)</', html, re.S)
    return re.sub(r"\s+", " ", m.group(1)).strip() if m else ""


class _MembersParser(HTMLParser):
    """Collects, in document order, the texts WebArena's helper reads: every
    ``td[data-label='Account'] span.gl-avatar-labeled-sublabel`` and every ``td.col-max-role span``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sublabels, self.roles = [], []
        self._td = None
        self._span = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "td":
            self._td = "account" if a.get("data-label") == "Account" else ("role" if "col-max-role" in cls else "other")
        elif tag == "span":
            if self._td == "account" and "gl-avatar-labeled-sublabel" in cls:
                self._span = ("sub", [])
            elif self._td == "role" and self._span is None:
                self._span = ("role", [])

    def handle_data(self, data):
        if self._span:
            self._span[1].append(data)

    def handle_endtag(self, tag):
        if tag == "span" and self._span:
            kind, buf = self._span
            (self.sublabels if kind == "sub" else self.roles).append("".join(buf).strip())
            self._span = None
        elif tag == "td":
            self._td = None


def project_member_role(base_url: str, session: requests.Session, project_path: str, member_username: str) -> str:
    """Re-implementation of WebArena's ``gitlab_get_project_memeber_role`` over static HTML:
    on ``/<ns>/<proj>/-/project_members`` find the index of the sublabel ``@<user>`` and return
    the role text at the same index (``""`` when absent). On the real image the table is
    rendered by Vue, so use a browser there; the replica serves it server-side."""
    html = session.get(f"{base_url}/{project_path}/-/project_members", timeout=30).text
    p = _MembersParser()
    p.feed(html)
    try:
        i = p.sublabels.index("@" + member_username)
        return p.roles[i]
    except (ValueError, IndexError):
        return ""


def project_members(base_url: str, auth, project_path: str) -> dict[str, int]:
    """``GET /api/v4/projects/:id/members/all`` → {username: access_level}."""
    rows = _api(base_url, auth, "GET", f"/projects/{_pid(project_path)}/members/all", params={"per_page": 100})
    return {m["username"]: m["access_level"] for m in rows}


def raw_file(base_url: str, session: requests.Session | None, project_path: str, ref: str, path: str) -> str | None:
    """``GET /<ns>/<proj>/-/raw/<ref>/<path>`` (the URL shape the tasks check); None on 404."""
    r = (session or requests).get(f"{base_url}/{project_path}/-/raw/{ref}/{path}", timeout=30)
    return r.text if r.status_code == 200 else None


def db_count(container: str, sql: str) -> str:
    """Run one SQL query inside the container with Omnibus' ``gitlab-psql`` wrapper (through
    python-on-whales) and return the trimmed output, e.g.
    ``db_count("gitlab", "SELECT count(*) FROM issues")``."""
    from python_on_whales import docker
    return docker.execute(container, ["gitlab-psql", "-d", "gitlabhq_production", "-tAc", sql]).strip()
