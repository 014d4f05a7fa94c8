"""An instance's lock holds even when its lock file is deleted or replaced while it is held
(issue 18, item 5): a second process, which would lock a new file, still finds the instance
busy, and gets it as soon as the holder ends. Real processes, a temporary state folder; no
Docker (the lock is the host's)."""
import os
import subprocess
import sys

import pytest

from sitectl.errors import InstanceBusy
from sitectl.paths import instance_dir
from sitectl.snapshots.journal import instance_lock
from sitectl.stack.target import resolve_target

HOLD = """
import sys, time
from sitectl.snapshots.journal import instance_lock
from sitectl.stack.target import resolve_target
with instance_lock(resolve_target('mini', host='127.0.0.1', instance=9), 'the holder'):
    print('held', flush=True)
    time.sleep(float(sys.argv[1]))
print('released', flush=True)
"""


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_removed_lock_file_lets_no_second_holder_in(tmp_path, monkeypatch, how):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    env = {**os.environ, "SITECTL_SNAPSHOTS_DIR": str(tmp_path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "3"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = instance_dir(9) / "instance.lock"
        lock.unlink()
        if how == "replaced":
            lock.write_text("")
        t = resolve_target("mini", host="127.0.0.1", instance=9)
        with pytest.raises(InstanceBusy, match="instance 9 is busy: pid .* \\(the holder"):
            with instance_lock(t, "the second", wait=False):
                pass
        # Waiting, it gets the instance once the holder is done.
        with instance_lock(t, "the second", wait=30):
            assert holder.stdout.readline().strip() == "released"
    finally:
        holder.wait(30)
    assert holder.returncode == 0
