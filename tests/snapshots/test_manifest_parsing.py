"""Snapshot manifests (``sitectl/snapshots/manifest.py``), snapshot names
(``sitectl.stores.check_snapshot_name``) and the member checks of snapshot archives
(``sitectl/snapshots/archive.py`` ``_check_archive``), all on files under ``tmp_path``:
``SITECTL_SNAPSHOTS_DIR`` points there, and the target (the mini stack, instance 5) is resolved
from the stack file alone: no engine, no container.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile

import pytest

from sitectl.errors import DamagedRecord, NotCovered, StoreError, UsageError
from sitectl.snapshots.archive import ARCHIVE_FORMAT, _check_archive
from sitectl.snapshots.manifest import (
    GOLDEN,
    check_covered,
    forget_sites,
    list_snapshots,
    manifest_path,
    read_manifest,
    write_manifest,
)
from sitectl.stack.target import resolve_target
from sitectl.stores import check_snapshot_name


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:  # no config file of the checkout or the environment
        mp.delenv("SITECTL_CONFIG", raising=False)
        mp.chdir(tmp_path_factory.mktemp("cwd"))
        return resolve_target("mini", host="127.0.0.1", instance=5)


@pytest.fixture
def state(tmp_path, monkeypatch):
    d = tmp_path / "state"
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(d))
    return d


def manifest(name: str, sites: dict[str, int], incomplete: dict | None = None, created="2026-01-02T03:04:05+00:00"):
    """A manifest as ``snapshot create`` writes it; ``sites`` maps a site to its store's size."""
    return {"name": name, "sitectl": "0.1.0", "stack": "mini", "host": "127.0.0.1", "instance": 5,
            "created": created, "incomplete": incomplete or {},
            "sites": {s: {"container": f"i5-{s}", "seconds": 1.5,
                          "stores": {"mysql:magentodb": {"fingerprint": {"table a": "1:2"}, "size": size, "tables": 1},
                                     "cache": {"fingerprint": {}, "size": 0}}}
                      for s, size in sites.items()}}


def raw(state, name: str, data: bytes | str):
    p = state / "i5" / name / "manifest.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


# -- snapshot names ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a", "golden", "s_1", "x9_", "a" + "b" * 30])
def test_check_snapshot_name_accepts_lower_case_names_up_to_31(name):
    assert check_snapshot_name(name) == name


@pytest.mark.parametrize("name", ["", "A", "Golden", "1a", "_a", "a-b", "a b", "a.b", "a/b", "../x", "a;b", "é",
                                  "a" * 32, " golden", "golden ", "gold\nen", "\ngolden"])
def test_check_snapshot_name_refuses_anything_else_with_the_rule_in_the_message(name):
    with pytest.raises(UsageError) as e:
        check_snapshot_name(name)
    assert str(e.value) == (f"invalid snapshot name {name!r}: use lower-case letters, digits and _ (max 31), "
                            "starting with a letter")


def test_check_snapshot_name_refuses_a_trailing_newline():
    with pytest.raises(UsageError):
        check_snapshot_name("golden\n")


# -- write_manifest ---------------------------------------------------------------------------
def test_write_manifest_writes_sorted_indented_json_and_leaves_no_temp_file(target, state):
    m = manifest("golden", {"shopping": 10})
    write_manifest(target, "golden", m)
    p = state / "i5" / "golden" / "manifest.json"
    assert manifest_path(target, "golden") == p
    assert p.read_text() == json.dumps(m, indent=1, sort_keys=True)
    write_manifest(target, "golden", {**m, "sites": {}})  # replaces it
    assert json.loads(p.read_text())["sites"] == {}
    assert sorted(os.listdir(p.parent)) == ["manifest.json"]


def test_write_manifest_that_fails_keeps_the_old_manifest(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 10}))
    before = manifest_path(target, "golden").read_bytes()
    with pytest.raises(TypeError):
        write_manifest(target, "golden", {"sites": {"x": object()}})
    assert manifest_path(target, "golden").read_bytes() == before


def test_write_manifest_that_fails_leaves_no_temp_file(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 10}))
    with pytest.raises(TypeError):
        write_manifest(target, "golden", {"sites": {"x": object()}})
    assert sorted(os.listdir(manifest_path(target, "golden").parent)) == ["manifest.json"]


# -- read_manifest ----------------------------------------------------------------------------
def test_read_manifest_returns_what_write_manifest_wrote(target, state):
    m = manifest("golden", {"shopping": 10, "reddit": 20})
    write_manifest(target, "golden", m)
    assert read_manifest(target, "golden") == m


def test_a_manifest_naming_another_snapshot_than_its_folder_is_damaged(target, state):
    """Found by a breaker run: `part/manifest.json` saying `"name": "golden"` made `snapshot list`
    show two golden rows and `snapshot list --all` offer part's listed copies for removal."""
    write_manifest(target, "part", manifest("golden", {"shopping": 1}))
    with pytest.raises(DamagedRecord, match=r"it names snapshot 'golden' but lies in the folder of 'part'"):
        read_manifest(target, "part")
    (row,) = list_snapshots(target)
    assert row["name"] == "part" and "lies in the folder of 'part'" in row["damaged"], row


def test_read_manifest_of_a_missing_snapshot_names_the_known_ones(target, state):
    with pytest.raises(UsageError) as e:
        read_manifest(target, "nope")
    assert str(e.value) == "no snapshot 'nope' for instance 5 (snapshots: none)"
    write_manifest(target, "golden", manifest("golden", {"shopping": 1}))
    write_manifest(target, "before_task", manifest("before_task", {"shopping": 1}))
    raw(state, "damaged", "[]")  # listed (as damaged) under its folder's name
    with pytest.raises(UsageError) as e:
        read_manifest(target, "nope")
    assert str(e.value) == "no snapshot 'nope' for instance 5 (snapshots: before_task, damaged, golden)"


def test_read_manifest_checks_the_name_before_any_path_is_built(target, state):
    with pytest.raises(UsageError, match=r"^invalid snapshot name '\.\./i6/golden'"):
        read_manifest(target, "../i6/golden")


def test_read_manifest_of_a_folder_named_manifest_json_is_no_snapshot(target, state):
    (state / "i5" / "odd" / "manifest.json").mkdir(parents=True)
    with pytest.raises(UsageError, match=r"^no snapshot 'odd' for instance 5 "):
        read_manifest(target, "odd")


def damaged(p, fault: str) -> str:
    """The message of a damaged manifest ``p``: the file, the fault, that it was left alone, the repair."""
    again = ("`sitectl reset --recreate` (re-creates the sites from their images and takes golden again)"
             if p.parent.name == GOLDEN else f"`sitectl snapshot create {p.parent.name}`")
    return (f"{p}: damaged snapshot manifest ({fault}); it was left as it is. Move it aside "
            f"(`mv {p} {p}.damaged`), then take the snapshot again: {again}")


@pytest.mark.parametrize("data, fault", [
    ("", "empty"),
    ("   \n", "empty"),
    ('{"name": "a"', "not JSON (Expecting ',' delimiter: line 1 column 13 (char 12))"),
    ('{"name": "a", "sites": {"shop', "not JSON (Unterminated string starting at: line 1 column 25 (char 24))"),
])
def test_read_manifest_of_an_empty_or_truncated_file_names_the_file_the_fault_and_the_repair(target, state, data,
                                                                                              fault):
    p = raw(state, "golden", data)
    with pytest.raises(DamagedRecord) as e:
        read_manifest(target, "golden")
    assert str(e.value) == damaged(p, fault)
    assert e.value.exit_code == 11 and p.read_text() == data  # refused, never rewritten


def test_read_manifest_of_bytes_that_are_not_text_names_the_file(target, state):
    p = raw(state, "task_a", b"\xff\xfe{")
    with pytest.raises(DamagedRecord) as e:
        read_manifest(target, "task_a")
    assert str(e.value) == damaged(p, "unreadable: 'utf-8' codec can't decode byte 0xff in position 0: invalid "
                                      "start byte")


@pytest.mark.parametrize("data, fault", [
    ("[]", "a JSON list, not an object"), ("null", "a JSON NoneType, not an object"),
    ('"golden"', "a JSON str, not an object"), ('{"name": "golden"}', "no 'sites' object"),
    ('{"sites": ["shopping"]}', "'sites' is not an object"), ('{"sites": "shopping_admin"}', "'sites' is not an object"),
    ('{"sites": {"shopping": {}}}', "site 'shopping' has no 'stores' object"),
    ('{"sites": {"shopping": {"stores": {"a": {"size": 1}}}}}', "store 'a' of site 'shopping' has no 'fingerprint' object"),
    ('{"sites": {"shopping": {"stores": {"a": {"fingerprint": {}, "size": "big"}}}}}',
     "store 'a' of site 'shopping' has a 'size' that is not a number"),
    ('{"sites": {}, "incomplete": ["reddit"]}', "'incomplete' is not an object of site -> reason"),
])
def test_read_manifest_of_wrong_shaped_json_names_the_file_and_the_fault(target, state, data, fault):
    p = raw(state, "golden", data)
    with pytest.raises(DamagedRecord) as e:
        read_manifest(target, "golden")
    assert str(e.value) == damaged(p, fault)


# -- list_snapshots ---------------------------------------------------------------------------
def test_list_snapshots_without_a_state_folder_is_empty(target, state):
    assert list_snapshots(target) == []


def test_list_snapshots_reports_each_manifest_by_name_with_sites_incomplete_and_size(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 10, "reddit": 32}))
    write_manifest(target, "a_task", manifest("a_task", {"gitlab": 5}, {"reddit": "snapshot at X failed: disk full"},
                                              created="2026-02-03T00:00:00+00:00"))
    (state / "i5" / "manifest.json").write_text("{}")  # not a snapshot folder's manifest: ignored
    (state / "i5" / "golden" / "deeper").mkdir()
    (state / "i5" / "golden" / "deeper" / "manifest.json").write_text("{}")
    (state / "i6" / "other").mkdir(parents=True)
    (state / "i6" / "other" / "manifest.json").write_text(json.dumps(manifest("other", {"map": 1})))
    assert list_snapshots(target) == [
        {"name": "a_task", "created": "2026-02-03T00:00:00+00:00", "sites": ["gitlab"], "incomplete": ["reddit"],
         "size": 5},
        {"name": "golden", "created": "2026-01-02T03:04:05+00:00", "sites": ["reddit", "shopping"], "incomplete": [],
         "size": 42},
    ]


@pytest.mark.parametrize("data", ["[]", '"text"', "42", '{"name": "x"}', '{"sites": []}', '{"sites": {"shopping": {}}}',
                                  '{"sites": {"shopping": {"stores": {"a": {"size": "big"}}}}}',
                                  '{"sites": {"shopping": {"stores": []}}}', '{"name": "trunc', ""])
def test_list_snapshots_marks_a_damaged_manifest_under_its_folder_name_with_the_fault(target, state, data):
    p = raw(state, "broken", data)
    write_manifest(target, "golden", manifest("golden", {"shopping": 1}))
    rows = list_snapshots(target)
    assert rows[0]["name"] == "broken" and rows[0]["sites"] == [] and rows[0]["size"] == 0
    assert rows[0]["damaged"].startswith(f"{p}: damaged snapshot manifest (")
    assert rows[1]["name"] == "golden" and "damaged" not in rows[1]


# -- forget_sites -----------------------------------------------------------------------------
def test_forget_sites_everywhere_drops_the_sites_and_their_reasons_and_removes_emptied_manifests(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 1, "reddit": 2}))
    write_manifest(target, "only_shop", manifest("only_shop", {"shopping": 1}, {"shopping": "old reason"}))
    write_manifest(target, "kept", manifest("kept", {"shopping": 1}))
    bad = raw(state, "notjson", "{oops")
    odd = raw(state, "odd", '{"sites": ["shopping"]}')
    forget_sites(target, ["shopping"], keep="kept")
    assert read_manifest(target, "golden")["sites"].keys() == {"reddit"}
    assert read_manifest(target, "golden")["incomplete"] == {}
    assert not (state / "i5" / "only_shop").exists()  # no site and no reason left: file and folder gone
    assert read_manifest(target, "kept") == manifest("kept", {"shopping": 1})
    assert bad.read_text() == "{oops" and odd.read_text() == '{"sites": ["shopping"]}'  # left alone
    assert sorted(os.listdir(state / "i5")) == ["golden", "kept", "notjson", "odd"]


def test_forget_sites_everywhere_keeps_a_manifest_that_still_records_why_a_site_is_missing(target, state):
    write_manifest(target, "snap", manifest("snap", {"shopping": 1}, {"reddit": "snapshot failed: disk full"}))
    forget_sites(target, ["shopping"])
    m = read_manifest(target, "snap")
    assert (m["sites"], m["incomplete"]) == ({}, {"reddit": "snapshot failed: disk full"})


def test_forget_sites_only_one_snapshot_records_why_and_keeps_the_manifest(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 1, "reddit": 2}))
    write_manifest(target, "other", manifest("other", {"shopping": 1}))
    forget_sites(target, ["shopping", "gitlab"], only="golden", why="being re-created")
    m = read_manifest(target, "golden")
    assert m["sites"].keys() == {"reddit"}
    assert m["incomplete"] == {"shopping": "being re-created", "gitlab": "being re-created"}
    assert read_manifest(target, "other") == manifest("other", {"shopping": 1})


def test_forget_sites_only_without_why_records_an_interrupted_snapshot_with_its_start_time(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 1}))
    forget_sites(target, ["shopping"], only="golden")
    m = read_manifest(target, "golden")
    assert m["sites"] == {}
    assert re.fullmatch(r"snapshot started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 did not finish \(interrupted\)",
                        m["incomplete"]["shopping"])
    assert sorted(os.listdir(state / "i5" / "golden")) == ["manifest.json"]


def test_forget_sites_only_with_no_sites_removes_a_manifest_that_is_empty(target, state):
    write_manifest(target, "golden", {"name": "golden", "sites": {}, "incomplete": {}})
    forget_sites(target, [], only="golden")
    assert not (state / "i5" / "golden").exists()


def test_forget_sites_leaves_the_folder_of_a_removed_manifest_that_holds_other_files(target, state):
    write_manifest(target, "golden", manifest("golden", {"shopping": 1}))
    (state / "i5" / "golden" / "notes.txt").write_text("kept")
    forget_sites(target, ["shopping"])
    assert os.listdir(state / "i5" / "golden") == ["notes.txt"]


# -- check_covered ----------------------------------------------------------------------------
def test_check_covered_passes_for_a_listed_site(target, state):
    write_manifest(target, "snap", manifest("snap", {"shopping": 1}))
    assert check_covered(target, target.stack.sites["shopping"], "snap") is None


@pytest.mark.parametrize("setup, name, message", [
    (None, "snap", "reddit: snapshot 'snap' has no complete copy of this site (not taken); "
                   "take it again with `sitectl snapshot create snap reddit`"),
    ({"shopping": 1}, "snap", "reddit: snapshot 'snap' has no complete copy of this site (not taken); "
                              "take it again with `sitectl snapshot create snap reddit`"),
    ("why", "snap", "reddit: snapshot 'snap' has no complete copy of this site (snapshot at T failed: disk full); "
                    "take it again with `sitectl snapshot create snap reddit`"),
    ("why", GOLDEN, "reddit: snapshot 'golden' has no complete copy of this site (snapshot at T failed: disk full)"),
])
def test_check_covered_raises_not_covered_naming_the_site_the_reason_and_the_next_step(target, state, setup, name,
                                                                                         message):
    if setup == "why":
        write_manifest(target, name, manifest(name, {"shopping": 1}, {"reddit": "snapshot at T failed: disk full"}))
    elif isinstance(setup, dict):
        write_manifest(target, name, manifest(name, setup))
    elif isinstance(setup, str):
        raw(state, name, setup)
    with pytest.raises(NotCovered) as e:
        check_covered(target, target.stack.sites["reddit"], name)
    assert str(e.value) == message
    assert isinstance(e.value, StoreError) and e.value.exit_code == 9


@pytest.mark.parametrize("data", ["{broken", "[]", '{"sites": "shopping_admin"}'])
def test_check_covered_of_a_damaged_manifest_refuses_it_naming_the_file(target, state, data):
    """Never read as "not covered" (which a reset answers by re-creating the site) nor as
    covering ('shopping' in the string 'shopping_admin')."""
    p = raw(state, GOLDEN, data)
    with pytest.raises(DamagedRecord, match=re.escape(f"{p}: damaged snapshot manifest")):
        check_covered(target, target.stack.sites["shopping"], GOLDEN)


# -- archive member checks ----------------------------------------------------------------------
PAYLOAD = b"-- MariaDB dump\nINSERT INTO t VALUES (1);\n"
REL = "payload/shopping/0-mysql-magentodb.sql"


def archive_manifest(**over) -> dict:
    m = {"format": ARCHIVE_FORMAT, "name": "snap1", "stack": "mini", "sitectl": "0.1.0",
         "sites": {"shopping": {"stores": {"mysql:magentodb": {"fingerprint": {"table t": "1:5"}, "size": 1}}}},
         "payload": {REL: {"site": "shopping", "store": "mysql:magentodb", "size": len(PAYLOAD),
                           "sha256": hashlib.sha256(PAYLOAD).hexdigest()}}}
    m.update(over)
    return m


def member(name: str, data: bytes = b"", type_=tarfile.REGTYPE, linkname: str = "") -> tuple:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.size = type_, linkname, len(data) if type_ == tarfile.REGTYPE else 0
    return ti, data


def manifest_member(m) -> tuple:
    return member("manifest.json", m if isinstance(m, bytes) else json.dumps(m).encode())


def good_members(**over) -> list[tuple]:
    return [manifest_member(archive_manifest(**over)), member(REL, PAYLOAD)]


@pytest.fixture
def check(tmp_path, target, monkeypatch):
    """Write ``members`` as a .tar.gz, run _check_archive on it from an empty working folder,
    and prove nothing was extracted anywhere."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def run(members: list[tuple]):
        path = tmp_path / "snap.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            for ti, data in members:
                tar.addfile(ti, io.BytesIO(data) if ti.isfile() else None)
        try:
            with tarfile.open(path, "r:gz") as tar:
                return _check_archive(tar, target)
        finally:
            assert os.listdir(work) == [] and sorted(os.listdir(tmp_path)) == ["snap.tar.gz", "work"]

    return run


def test_check_archive_accepts_a_well_formed_archive_and_returns_its_manifest(check):
    assert check(good_members()) == archive_manifest()


NOT_ALLOWED = "archive member {!r} is not allowed (only regular files under payload/)"


@pytest.mark.parametrize("bad", [
    member("/etc/passwd", b"x"),
    member("/manifest.json", b"{}"),
    member("payload/../manifest.json", b"x"),
    member("payload/shopping/../../evil", b"x"),
    member("../payload/shopping/0-x", b"x"),
    member("./manifest.json", b"{}"),
    member("payload/./shopping/0-x", b"x"),
    member("payload//0-x", b"x"),
    member("payload/shopping/0-x/", b"x"),
    member("payload/shop ping/0-x", b"x"),
    member("payload/shopping/0-x\\y", b"x"),
    member("payload/shopping/-x", b"x"),
    member("payload/shopping/" + "a" * 101, b"x"),
    member("payload/shopping/0-link", type_=tarfile.SYMTYPE, linkname="/etc/passwd"),
    member("payload/shopping/0-link", type_=tarfile.SYMTYPE, linkname="../../manifest.json"),
    member("payload/shopping/0-hard", type_=tarfile.LNKTYPE, linkname="manifest.json"),
    member("payload/shopping/0-dev", type_=tarfile.CHRTYPE),
    member("payload/shopping/0-blk", type_=tarfile.BLKTYPE),
    member("payload/shopping/0-fifo", type_=tarfile.FIFOTYPE),
    member("payload", type_=tarfile.DIRTYPE),
    member("payload/shopping", type_=tarfile.DIRTYPE),
], ids=lambda m: f"{m[0].name!r}-type{m[0].type.decode()}")
def test_check_archive_refuses_members_that_are_not_plain_relative_regular_files(check, bad):
    with pytest.raises(UsageError) as e:
        check([*good_members(), bad])
    assert str(e.value) == NOT_ALLOWED.format(bad[0].name)


@pytest.mark.parametrize("name", ["other.txt", "payload/0-x", "payload/shopping", "payload/shopping/a/b",
                                  "payloads/shopping/0-x", "manifest.json.bak", "Manifest.json"])
def test_check_archive_refuses_regular_files_outside_the_layout(check, name):
    with pytest.raises(UsageError) as e:
        check([*good_members(), member(name, b"x")])
    assert str(e.value) == f"archive member {name!r} is not allowed"


def test_check_archive_refuses_an_archive_without_manifest(check):
    with pytest.raises(UsageError) as e:
        check([member(REL, PAYLOAD)])
    assert str(e.value) == "archive has no manifest.json"


def test_check_archive_refuses_a_manifest_over_64_mib_before_reading_it(tmp_path, target):
    path = tmp_path / "big.tar"  # a sparse file: the header claims 64 MiB + 1 bytes of zeros
    ti = tarfile.TarInfo("manifest.json")
    ti.size = (64 << 20) + 1
    with open(path, "wb") as f:
        f.write(ti.tobuf())
        f.truncate(512 + -(-ti.size // 512) * 512 + 1024)
    with tarfile.open(path, "r:") as tar:
        with pytest.raises(UsageError) as e:
            _check_archive(tar, target)
    assert str(e.value) == "archive manifest.json is larger than 64 MiB"


def test_check_archive_never_reads_a_manifest_over_64_mib_even_behind_a_small_one(tmp_path, target):
    opened: list[int] = []

    class SpyTar(tarfile.TarFile):
        def extractfile(self, m):
            opened.append((self.getmember(m) if isinstance(m, str) else m).size)
            return super().extractfile(m)

    small = json.dumps(archive_manifest()).encode()
    path = tmp_path / "dup.tar"
    with open(path, "wb") as f:
        ti = tarfile.TarInfo("manifest.json")
        ti.size = len(small)
        f.write(ti.tobuf() + small + b"\0" * (-len(small) % 512))
        big = tarfile.TarInfo("manifest.json")
        big.size = (64 << 20) + 1
        f.write(big.tobuf())
        f.truncate(f.tell() + -(-big.size // 512) * 512 + 1024)
    with SpyTar.open(path, "r:") as tar:
        with pytest.raises(UsageError):
            _check_archive(tar, target)
    assert max(opened, default=0) <= 64 << 20


@pytest.mark.parametrize("data, message", [
    (b"{", "archive manifest.json is not valid JSON: Expecting property name enclosed in double quotes: "
           "line 1 column 2 (char 1)"),
    (b"", "archive manifest.json is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    (b"\xff{}", "archive manifest.json is not valid JSON: 'utf-8' codec can't decode byte 0xff in position 0: "
                "invalid start byte"),
    (b"[]", "archive format '?' is not 2"),
    (b'"x"', "archive format '?' is not 2"),
    (b"{}", "archive format None is not 2"),
    (b'{"format": 1}', "archive format 1 is not 2"),
    (b'{"format": "2"}', "archive format '2' is not 2"),
])
def test_check_archive_refuses_a_manifest_that_is_not_json_or_another_format(check, data, message):
    with pytest.raises(UsageError) as e:
        check([manifest_member(data), member(REL, PAYLOAD)])
    assert str(e.value) == message


@pytest.mark.parametrize("over, message", [
    ({"name": None}, "archive manifest field 'name' is missing or not a str"),
    ({"name": 5}, "archive manifest field 'name' is missing or not a str"),
    ({"stack": ["mini"]}, "archive manifest field 'stack' is missing or not a str"),
    ({"sites": []}, "archive manifest field 'sites' is missing or not a dict"),
    ({"payload": "x"}, "archive manifest field 'payload' is missing or not a dict"),
    ({"sites": {}}, "archive manifest names no sites or no payload"),
    ({"payload": {}}, "archive manifest names no sites or no payload"),
    ({"name": "Bad-Name"}, "invalid snapshot name 'Bad-Name': use lower-case letters, digits and _ (max 31), "
                           "starting with a letter"),
    ({"name": "../../x"}, "invalid snapshot name '../../x': use lower-case letters, digits and _ (max 31), "
                          "starting with a letter"),
    ({"sites": {"shopping": []}}, "archive manifest: site 'shopping' has no valid store entries"),
    ({"sites": {"shopping": {"stores": []}}}, "archive manifest: site 'shopping' has no valid store entries"),
    ({"sites": {"shopping": {"stores": {"mysql:magentodb": {"fingerprint": []}}}}},
     "archive manifest: site 'shopping' has no valid store entries"),
    ({"sites": {"shopping": {"stores": {"mysql:magentodb": "x"}}}},
     "archive manifest: site 'shopping' has no valid store entries"),
    ({"stack": "webarena"}, "archive is of stack 'webarena', not 'mini'"),
])
def test_check_archive_refuses_malformed_manifest_fields(check, over, message):
    with pytest.raises(UsageError) as e:
        check(good_members(**over))
    assert str(e.value) == message


def test_check_archive_refuses_sites_the_stack_lacks_naming_them(check):
    store = {"stores": {"mysql:magentodb": {"fingerprint": {}}}}
    sites = {"evil": store, "shopping": archive_manifest()["sites"]["shopping"], "zzz": store}
    with pytest.raises(UsageError) as e:
        check(good_members(sites=sites))
    assert str(e.value) == "archive names sites this stack lacks: evil, zzz"


def _entry(**over):
    return {**archive_manifest()["payload"][REL], **over}


@pytest.mark.parametrize("rel, meta", [
    ("payload/shopping/x.sql", _entry()),                      # no <n>- prefix
    ("payload/reddit/0-a.sql", _entry()),                      # a site the manifest does not list
    ("payload/0-a.sql", _entry()),
    ("payload/shopping/0-a.sql/b", _entry()),
    ("other/shopping/0-a.sql", _entry()),
    (REL, "not a dict"),
    (REL, _entry(size="44")),
    (REL, _entry(size=None)),
    (REL, _entry(sha256=None)),
    (REL, _entry(store=None)),
    (REL, _entry(store="postgres:postmill")),                  # a store the site's entry does not list
])
def test_check_archive_refuses_malformed_payload_entries(check, rel, meta):
    with pytest.raises(UsageError) as e:
        check(good_members(payload={rel: meta}))
    assert str(e.value) == f"archive manifest: payload entry {rel!r} is malformed"


def test_check_archive_refuses_a_payload_file_the_manifest_lists_but_the_archive_lacks(check):
    payload = {**archive_manifest()["payload"], "payload/shopping/1-files.tar": _entry()}
    with pytest.raises(UsageError) as e:
        check([manifest_member(archive_manifest(payload=payload)), member(REL, PAYLOAD)])
    assert str(e.value) == ("archive payload files do not match its manifest "
                            "(missing: ['payload/shopping/1-files.tar'], extra: [])")


def test_check_archive_refuses_a_payload_file_the_manifest_does_not_list(check):
    with pytest.raises(UsageError) as e:
        check([*good_members(), member("payload/shopping/1-extra.sql", b"DROP DATABASE x;")])
    assert str(e.value) == ("archive payload files do not match its manifest "
                            "(missing: [], extra: ['payload/shopping/1-extra.sql'])")


@pytest.mark.parametrize("data", [PAYLOAD + b"DROP TABLE t;\n", PAYLOAD[:-1], PAYLOAD.replace(b"1", b"2")],
                         ids=["longer", "shorter", "same-size-other-bytes"])
def test_check_archive_refuses_a_payload_file_whose_size_or_sha256_differs(check, data):
    with pytest.raises(UsageError) as e:
        check([manifest_member(archive_manifest()), member(REL, data)])
    assert str(e.value) == f"archive file {REL} does not match its manifest (tampered or damaged)"


def test_check_archive_refuses_a_payload_file_filed_under_another_site(check):
    with pytest.raises(UsageError) as e:
        check(good_members(payload={REL: _entry(site="reddit")}))
    assert str(e.value) == f"archive file {REL} is filed under the wrong site"


def test_check_archive_refuses_a_member_name_ending_in_a_newline(check):
    rel = REL + "\n"
    with pytest.raises(UsageError):
        check([manifest_member(archive_manifest(payload={rel: _entry()})), member(rel, PAYLOAD)])
