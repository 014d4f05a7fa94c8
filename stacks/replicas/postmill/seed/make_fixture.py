#!/usr/bin/env python3
"""Derive seed/fixture.json (facts only) from WebArena's and VisualWebArena's reddit task files.

Usage: python3 make_fixture.py /path/to/webarena/test.raw.json \
           /path/to/visualwebarena/test_reddit.raw.json [/path/to/visualwebarena/test_classifieds.raw.json] > fixture.json

(VisualWebArena's classifieds tasks 231-233 open forum posts too.)

WebArena (every task whose `sites` include `reddit`): each submission URL
`/f/<forum>/<id>/<slug>` (start URLs, reference URLs, program_html URLs, answers), every forum
name, comment ids, the images of the /f/pics tasks 615-619, and the users the intents name.
Authorship facts come from the task intents ("created by X in subreddit Y" with the program_html
URLs of that task).

VisualWebArena (key "vwa"; same forum image, so the same ids): the forums WebArena does not name,
every submission `/f/<forum>/<id>[/<slug>]` not already in WebArena's list (VWA often gives no slug:
then the slug is the placeholder `post-<id>`, flagged `slug_known: false`; `-` is VWA's "any slug"
and counts as unknown), the comment ids of `/f/<forum>/<id>/<slug>/comment/<cid>` URLs, and every
file named under `/submission_images/` (with the submission it belongs to when its task names
exactly one submission, else the forum of its task: start URL forum, or the one forum its intent
names). Forum names are merged case-insensitively; WebArena's spelling wins.

Run once; the output is committed so that builds do not need the task files.
"""
import json
import re
import sys

CANON = {"diy": "DIY", "earthporn": "EarthPorn", "machinelearning": "MachineLearning"}
TO_CREATE = {"sci_fi", "cmu_lti", "Cyberpunk", "PlantsForCatParents", "Karaoke"}
SUB_RE = re.compile(r"(?:__REDDIT__|reddit\.com)/f/([\w-]+)/(\d+)/([\w-]+)")
FORUM_RE = re.compile(r"(?:__REDDIT__|reddit\.com)/f/([\w-]+)")
PICS_RE = re.compile(r"^Re-post the image of (.+) in this page to ")
IMAGE_RE = re.compile(r"[0-9a-f]{64}\.\w+")
# VisualWebArena: the slug is optional; comment permalinks carry a comment id
VWA_SUB_RE = re.compile(r"__REDDIT__/f/([\w-]+)/(\d+)(?:/([\w-]+))?(?:/comment/(\d+))?")
VWA_IMAGE_RE = re.compile(r"__REDDIT__/submission_images/([0-9a-f]{64}\.\w+)")
VWA_INTENT_FORUM_RE = re.compile(r"(?<![\w/])/?f/([\w-]+)")


def webarena(path):
    tasks = [t for t in json.load(open(path)) if "reddit" in t["sites"]]
    subs, forums, authors, pics = {}, set(), {}, []
    for t in tasks:
        blob = json.dumps(t)
        for f in FORUM_RE.findall(blob):
            forums.add(CANON.get(f, f))
        ids = []
        for f, sid, slug in SUB_RE.findall(blob):
            f = CANON.get(f, f)
            subs.setdefault(int(sid), {"id": int(sid), "forum": f, "slug": slug, "tasks": []})
            if t["task_id"] not in subs[int(sid)]["tasks"]:
                subs[int(sid)]["tasks"].append(t["task_id"])
            ids.append(int(sid))
        m = re.search(r"[Ll]ike all submissions created by (\S+) in subreddit", t["intent"])
        if m:
            for sid in ids:
                authors[sid] = m.group(1)
        if t["intent"].startswith("Edit my post on"):
            for sid in ids:
                authors[sid] = "MarvelsGrantMan136"
        m = PICS_RE.match(t["intent"])
        if m and t["start_url"] == "__REDDIT__/f/pics":
            for file in sorted(set(IMAGE_RE.findall(blob))):
                pics.append({"title": m.group(1), "file": file, "task": t["task_id"]})
    for sid, user in authors.items():
        subs[sid]["user"] = user
    # forums named only in intents (the answer depends on them existing)
    for f in ("Showerthoughts", "Worcester", "photoshopbattles"):
        forums.add(f)
    users = sorted({"MarvelsGrantMan136", *authors.values(),
                    # named in intents whose answer is N/A: the user exists, posts do not
                    "FTorrez81", "jacyanthis"})
    return {
        "source": "derived from WebArena config_files/test.raw.json (reddit tasks) and VisualWebArena "
                  "test_reddit.raw.json and test_classifieds.raw.json (key vwa) by make_fixture.py",
        "forums": sorted(forums - TO_CREATE, key=str.lower),
        "forums_created_by_tasks": sorted(TO_CREATE, key=str.lower),
        "users": users,
        "submissions": [subs[k] for k in sorted(subs)],
        "comments": [
            {"id": 1235250, "submission_id": 59421, "note": "task 409: reply target (the site manager's comment)"},
            {"id": 1042264, "submission_id": 69404, "note": "task 410: the first reply in the post"},
        ],
        "pics_images": sorted(pics, key=lambda p: p["task"]),
        "notes": {
            "59421": "task 69: post about supporting local book stores names bookshop.org",
            "1": "task 731: body contains 'Crazy device for ML!'",
            "television": "tasks 732-735: MarvelsGrantMan136's posts with an empty body",
        },
    }


def _order(task_ref):
    """Sort key of a task reference: the reddit file's ids (numbers) first, then the other
    files' (``"<file>:<id>"``)."""
    return (isinstance(task_ref, str), str(task_ref) if isinstance(task_ref, str) else task_ref)


def vwa(paths, wa):
    # The reddit file's tasks by their ids; those of the other files (the classifieds tasks that
    # open the forum too) as "<file>:<id>", and only when they name the forum.
    tasks = []
    for i, path in enumerate(paths):
        stem = path.rsplit("/", 1)[-1].split(".")[0].removeprefix("test_")
        for t in json.load(open(path)):
            if i == 0:
                tasks.append(t)
            elif "__REDDIT__" in json.dumps(t):
                tasks.append({**t, "task_id": f"{stem}:{t['task_id']}"})
    known = {f.lower(): f for f in wa["forums"] + wa["forums_created_by_tasks"]}
    wa_ids = {s["id"] for s in wa["submissions"]}
    spell = {}      # lower -> spellings seen in VWA

    def canon(f):
        f = CANON.get(f.lower(), f)
        spell.setdefault(f.lower(), set()).add(f)
        return f.lower()

    subs, comments, images = {}, {}, {}
    for t in tasks:
        blob = json.dumps(t)
        for f in FORUM_RE.findall(blob):
            canon(f)
        named = set()
        for f, sid, slug, cid in VWA_SUB_RE.findall(blob):
            sid = int(sid)
            s = subs.setdefault(sid, {"id": sid, "forum": canon(f), "slug": None, "tasks": []})
            if s["forum"] != canon(f):
                raise SystemExit(f"submission {sid} named in two forums: {s['forum']}, {f}")
            if slug and slug != "-":
                if s["slug"] and s["slug"] != slug:
                    raise SystemExit(f"submission {sid} has two slugs: {s['slug']}, {slug}")
                s["slug"] = slug
            if t["task_id"] not in s["tasks"]:
                s["tasks"].append(t["task_id"])
            named.add(sid)
            if cid:
                c = comments.setdefault(int(cid), {"id": int(cid), "submission_id": sid, "tasks": []})
                if t["task_id"] not in c["tasks"]:
                    c["tasks"].append(t["task_id"])
        files = sorted(set(VWA_IMAGE_RE.findall(blob)))
        if not files:
            continue
        where = {}
        if len(named) == 1:
            where["submission_id"] = next(iter(named))
        else:
            m = re.match(r"__REDDIT__/f/([\w-]+)", t["start_url"])
            cands = {canon(m.group(1))} if m else {canon(f) for f in VWA_INTENT_FORUM_RE.findall(t["intent"])}
            if len(cands) == 1:
                where["forum"] = cands.pop()
        for file in files:
            img = images.setdefault(file, {"file": file, "tasks": [], **where})
            if t["task_id"] not in img["tasks"]:
                img["tasks"].append(t["task_id"])

    def name(low):
        return known.get(low) or sorted(spell[low])[0]

    out_subs = []
    for sid in sorted(subs):
        s = subs[sid]
        if sid in wa_ids:
            continue
        out = {"id": sid, "forum": name(s["forum"]), "slug": s["slug"] or f"post-{sid}",
               "slug_known": bool(s["slug"]), "tasks": sorted(s["tasks"], key=_order)}
        out_subs.append(out)
    for img in images.values():
        if "forum" in img:
            img["forum"] = name(img["forum"])
        img["tasks"].sort(key=_order)
    return {
        "forums": sorted((name(low) for low in spell if low not in known), key=str.lower),
        "submissions": out_subs,
        "comments": [dict(c, tasks=sorted(c["tasks"], key=_order)) for _, c in sorted(comments.items())],
        "images": sorted(images.values(), key=lambda i: (_order(i["tasks"][0]), i["file"])),
    }


def main(wa_path, *vwa_paths):
    out = webarena(wa_path)
    if vwa_paths:
        out["vwa"] = vwa(list(vwa_paths), out)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
