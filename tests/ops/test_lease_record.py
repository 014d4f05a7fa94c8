"""A reset server's lease seen from outside it (issue 18, item 5): the record in the instance's
state folder makes a reset from the CLI or the Python API refuse a leased instance, naming the
lease (its id cut to 6 characters), unless forced, which the record notes for the server's
status; a record whose server is gone or whose heartbeat is overdue is no lease. Real files in a
temporary state folder; the reset is refused before it reaches Docker, so none is needed here
(the server's own flow is in tests/test_serve.py)."""
import json
import subprocess
import sys

import pytest

from sitectl.errors import InstanceBusy
from sitectl.ops import lease_record
from sitectl.ops.reset import reset
from sitectl.paths import instance_dir
from sitectl.stack.target import resolve_target

LEASE = "AbCdEf0123456789xyzQRS"


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    return tmp_path


def test_a_leased_instance_refuses_a_reset_unless_forced(state):
    lease_record.record(9, LEASE, "worker-7", ttl=60)
    text = (instance_dir(9) / "lease.json").read_text()
    assert LEASE not in text and LEASE[:6] in text  # the credential is never written whole
    t = resolve_target("mini", host="127.0.0.1", instance=9)
    with pytest.raises(InstanceBusy, match=r"instance 9 is leased to 'worker-7' .*lease AbCdEf\.\.\..*--force"):
        reset(t, [], engine=None)
    lease_record.check(9, force=True, what="reset")
    assert len(lease_record.forced(9, LEASE)) == 1 and "reset forced by pid" in lease_record.forced(9, LEASE)[0]
    # A heartbeat keeps the note; the end of the lease removes the record.
    lease_record.record(9, LEASE, "worker-7", ttl=60)
    assert len(lease_record.forced(9, LEASE)) == 1
    lease_record.drop(9, "another-lease-id")
    assert lease_record.read(9) is not None
    lease_record.drop(9, LEASE)
    assert lease_record.read(9) is None and not (instance_dir(9) / "lease.json").exists()


def test_a_record_of_a_gone_server_or_an_overdue_lease_is_no_lease(state):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = instance_dir(9) / "lease.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"lease": LEASE[:6], "client": "c", "pid": int(gone.stdout), "expires_at": 4e9}))
    assert lease_record.read(9) is None
    lease_record.record(9, LEASE, "c", ttl=-1)  # overdue
    assert lease_record.read(9) is None
    lease_record.check(9, force=False, what="reset")  # nothing to refuse
    path.write_text("{not json")
    assert lease_record.read(9) is None
