"""VisualWebArena's input images (issue 19, item 4): a task's image paths are read under the
folder they are relative to (never outside it), its URLs over real HTTP (a local server), and
each must hold an image. Host-only; `task prepare` with the homepage serving the images is in
tests/ops/test_prepare.py."""
from __future__ import annotations

import struct
import threading
import zlib
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sitectl.ops.task_images import check_image, image_refs


def png(w: int = 2, h: int = 2) -> bytes:
    """A real PNG (RFC 2083): signature, IHDR, one IDAT of grey rows, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\x80" * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture
def checkout(tmp_path):
    """A folder laid out like VisualWebArena's checkout, with one image and one text file."""
    d = tmp_path / "vwa" / "environment_docker/webarena-homepage/static/input_images/reddit/task_0"
    d.mkdir(parents=True)
    (d / "input_0.png").write_bytes(png())
    (d / "notes.txt").write_text("not an image")
    (tmp_path / "secret.png").write_bytes(png())
    return tmp_path / "vwa"


def test_refs_are_none_one_or_a_list():
    assert image_refs({"image": None}) == [] and image_refs({}) == []
    assert image_refs({"image": "a.png"}) == ["a.png"] and image_refs({"image": ["a.png", "b.png"]}) == ["a.png", "b.png"]


def test_paths_are_read_under_their_root_only(checkout):
    rel = "environment_docker/webarena-homepage/static/input_images/reddit/task_0"
    got, why = check_image(f"{rel}/input_0.png", checkout)
    assert why is None and got == str(checkout / rel / "input_0.png")
    assert "is not an image" in check_image(f"{rel}/notes.txt", checkout)[1]
    assert "cannot read" in check_image(f"{rel}/input_9.png", checkout)[1] and "--images-root" in check_image(f"{rel}/input_9.png", checkout)[1]
    assert "is a folder" in check_image(rel, checkout)[1]
    assert "leaves" in check_image("../secret.png", checkout)[1]  # a real image, outside the root: not read
    assert "absolute path" in check_image(str(checkout.parent / "secret.png"), checkout)[1]
    (checkout / "link.png").symlink_to(checkout.parent / "secret.png")
    assert "leaves" in check_image("link.png", checkout)[1]


def test_urls_are_fetched_and_must_be_images(checkout):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(checkout)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/environment_docker/webarena-homepage/static/input_images/reddit/task_0"
    try:
        assert check_image(f"{base}/input_0.png", checkout) == (f"{base}/input_0.png", None)
        assert "HTTP 404" in check_image(f"{base}/input_9.png", checkout)[1]
        assert "HTTP 200 but not an image" in check_image(f"{base}/notes.txt", checkout)[1]
        assert "ConnectionError" in check_image("http://127.0.0.1:9/x.png", checkout)[1]
    finally:
        srv.shutdown()
        srv.server_close()
