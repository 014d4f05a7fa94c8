#!/usr/bin/env python3
"""Derive seed/fixture.json (facts only) from WebArena's task file.

Usage: python3 make_fixture.py /path/to/test.raw.json > fixture.json

Collects, from every task whose `sites` include `reddit`: each submission URL
`/f/<forum>/<id>/<slug>` (start URLs, reference URLs, program_html URLs, answers), every forum
name, comment ids, and the users the intents name. Authorship facts come from the task intents
("created by X in subreddit Y" with the program_html URLs of that task). Run once; the output is
committed so that builds do not need the task file.
"""
import json
import re
import sys

CANON = {"diy": "DIY", "earthporn": "EarthPorn", "machinelearning": "MachineLearning"}
TO_CREATE = {"sci_fi", "cmu_lti", "Cyberpunk", "PlantsForCatParents", "Karaoke"}
SUB_RE = re.compile(r"(?:__REDDIT__|reddit\.com)/f/([\w-]+)/(\d+)/([\w-]+)")
FORUM_RE = re.compile(r"(?:__REDDIT__|reddit\.com)/f/([\w-]+)")


def main(path):
    tasks = [t for t in json.load(open(path)) if "reddit" in t["sites"]]
    subs, forums, authors = {}, set(), {}
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
    for sid, user in authors.items():
        subs[sid]["user"] = user
    # forums named only in intents (the answer depends on them existing)
    for f in ("Showerthoughts", "Worcester", "photoshopbattles"):
        forums.add(f)
    users = sorted({"MarvelsGrantMan136", *authors.values(),
                    # named in intents whose answer is N/A: the user exists, posts do not
                    "FTorrez81", "jacyanthis"})
    out = {
        "source": "derived from WebArena config_files/test.raw.json (reddit tasks) by make_fixture.py",
        "forums": sorted(forums - TO_CREATE, key=str.lower),
        "forums_created_by_tasks": sorted(TO_CREATE, key=str.lower),
        "users": users,
        "submissions": [subs[k] for k in sorted(subs)],
        "comments": [
            {"id": 1235250, "submission_id": 59421, "note": "task 409: reply target (the site manager's comment)"},
            {"id": 1042264, "submission_id": 69404, "note": "task 410: the first reply in the post"},
        ],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
