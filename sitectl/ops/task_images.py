"""VisualWebArena's input images: where a task's ``image`` points, and whether it can be read.

A task's ``image`` is None, one reference or a list (research/family-formats.md §1.4, §1.8):
VisualWebArena's repository files give paths relative to its checkout
(``environment_docker/webarena-homepage/static/input_images/reddit/task_0/input_0.png``, opened
with ``PIL.Image.open`` from the harness's working folder); the file BrowserGym reads gives URLs
on the homepage (``__HOMEPAGE__/static/input_images/...``), fetched over HTTP. The images are not
shipped with the task data (346 PNGs, 153 MB, in VisualWebArena's repository): docs/cli.md says
how to point sitectl at them.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import requests

from sitectl import http

#: The first bytes of the image formats a harness can open (PNG: RFC 2083 §3.1; JPEG: JFIF's
#: SOI marker; GIF87a/89a; WebP: a RIFF container of type WEBP).
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


def _is_image(head: bytes) -> bool:
    return head.startswith(_SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def image_refs(task: dict) -> list[str]:
    """The task's image references, in order (``[]`` when it has none)."""
    im = task.get("image")
    if im is None:
        return []
    if isinstance(im, str):
        return [im]
    if isinstance(im, list):
        return [str(x) for x in im]
    return [str(im)]


def check_image(ref: str, root: Path, timeout: float = 20.0) -> tuple[str, str | None]:
    """Resolve one (filled-in) image reference and read its first bytes.

    Args:
        ref: an ``http(s)://`` URL, or a path relative to ``root``.
        root: the folder relative paths are read from (VisualWebArena's checkout, where its
            harness runs); a path that leaves it (``..``, absolute) is refused, not read.

    Returns:
        ``(resolved, problem)``: the URL or absolute path, and None when it holds an image
        (PNG, JPEG, GIF or WebP), else why not.
    """
    if ref.startswith(("http://", "https://")):
        try:
            urlsplit(ref).port  # noqa: B018 - raises on a malformed port
            with http.new_session().get(ref, timeout=timeout, stream=True) as r:
                if r.status_code != 200:
                    return ref, f"image {ref}: HTTP {r.status_code}"
                head = next(r.iter_content(16), b"")
        except (requests.RequestException, ValueError) as e:
            return ref, f"image {ref}: {type(e).__name__}"
        return ref, None if _is_image(head) else f"image {ref}: HTTP 200 but not an image ({r.headers.get('Content-Type', 'no type')})"
    base = root.resolve()
    p = Path(ref)
    if p.is_absolute():
        return ref, f"image {ref}: an absolute path (a task's image paths are relative to VisualWebArena's checkout)"
    full = (base / p).resolve()
    if full != base and base not in full.parents:
        return str(full), f"image {ref}: leaves {base}"
    try:
        with open(full, "rb") as f:
            head = f.read(16)
    except IsADirectoryError:
        return str(full), f"image {ref}: {full} is a folder"
    except OSError as e:
        return str(full), f"image {ref}: cannot read {full} ({e.strerror}); give the folder the paths are relative to " \
                          "with --images-root (VisualWebArena's checkout)"
    return str(full), None if _is_image(head) else f"image {ref}: {full} is not an image"
