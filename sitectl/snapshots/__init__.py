"""Snapshots and resets of sites' state stores.

One module a job:

* :mod:`~sitectl.snapshots.manifest`: the host half of a snapshot (``manifest.json``), which
  sites a snapshot covers, :data:`GOLDEN`;
* :mod:`~sitectl.snapshots.take`: ``snapshot create`` and ``delete``;
* :mod:`~sitectl.snapshots.reset`: resets (delta, full, re-create escalation) and recovery of
  an interrupted one;
* :mod:`~sitectl.snapshots.journal`: the instance lock and the reset journal;
* :mod:`~sitectl.snapshots.verify`: ``verify --deep``;
* :mod:`~sitectl.snapshots.diff`: ``sitectl diff``, what changed since a snapshot;
* :mod:`~sitectl.snapshots.checkpoint`: ``sitectl checkpoint``, mid-episode states kept as their
  delta from golden;
* :mod:`~sitectl.snapshots.archive`: ``snapshot export`` and ``import``;
* :mod:`~sitectl.snapshots.containers`: bringing a site up so that its manifests stay true.

``up`` takes the golden snapshot right after the post-start steps (``sitectl.ops.lifecycle``).
The names below are this layer's public API.
"""
from __future__ import annotations

from sitectl.snapshots.archive import export, import_
from sitectl.snapshots.checkpoint import delete as delete_checkpoint
from sitectl.snapshots.checkpoint import list_checkpoints
from sitectl.snapshots.checkpoint import restore as restore_checkpoint
from sitectl.snapshots.checkpoint import save as save_checkpoint
from sitectl.snapshots.containers import bring_up
from sitectl.snapshots.diff import diff
from sitectl.snapshots.manifest import (
                                        GOLDEN,
                                        forget_sites,
                                        list_snapshots,
                                        manifest_path,
                                        read_manifest,
                                        write_manifest,
)
from sitectl.snapshots.reset import SiteReset, recover, recover_pending, reset, reset_site
from sitectl.snapshots.take import create, delete, leftovers, prune, snapshot_site
from sitectl.snapshots.verify import verify_deep

__all__ = ["GOLDEN", "SiteReset", "bring_up", "create", "delete", "delete_checkpoint", "diff", "export", "forget_sites", "import_",
           "leftovers", "list_checkpoints", "list_snapshots", "prune", "manifest_path", "read_manifest", "recover", "recover_pending", "reset", "reset_site",
           "restore_checkpoint", "save_checkpoint", "snapshot_site", "verify_deep", "write_manifest"]
