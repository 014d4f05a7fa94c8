"""The files store's file-name round trip, without Docker: any name the file system allows
(every byte but NUL and "/") goes into the container through :func:`_arg` and the store's own
shell decoder (run here in the host's POSIX ``sh`` and in BusyBox ``sh``), and comes back out
through ``od`` hex and :func:`_records` as the same bytes; the sh way's own escaping (``enc``,
for its one-line records) gives :func:`_arg`'s text, which :func:`_unarg` reads back;
:func:`shown` is printable, one line and one-to-one. Property tests (hypothesis) over arbitrary byte strings."""
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitectl.stores.files import _arg, _records, _unarg, shown
from sitectl.stores.files_sh import DEC_SH, ENC_SH

NAMES = st.binary(min_size=1, max_size=300).filter(lambda b: b"\0" not in b and b"/" not in b)
SHELLS = [["sh"]] + ([["busybox", "sh"]] if shutil.which("busybox") else [])


def _as_str(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: " ".join(s))
@settings(max_examples=150, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=5))
def test_names_decode_in_the_shell_to_the_same_bytes(shell, names):
    # The decoder, then each decoded name written NUL-terminated and turned to hex as the
    # store's commands do: what Python reads back is the names' bytes exactly.
    script = DEC_SH + 'for a; do dec "$a"; printf "%s\\0" "$r"; done | od -An -v -tx1'
    out = subprocess.run([*shell, "-c", script, "sh", *(_arg(_as_str(n)) for n in names)],
                         capture_output=True, text=True, check=True).stdout
    assert [r.encode("utf-8", "surrogateescape") for r in _records(out)] == names


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: " ".join(s))
@settings(max_examples=100, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=5))
def test_the_sh_ways_escaping_is_the_hosts_and_reads_back(shell, names):
    # enc takes the name as the shell has it (decoded from the argument), prints it escaped on
    # one line: exactly _arg's text, which _unarg turns back into the name.
    script = DEC_SH + ENC_SH + 'for a; do dec "$a"; enc "$r"; printf "%s\\n" "$e"; done'
    out = subprocess.run([*shell, "-c", script, "sh", *(_arg(_as_str(n)) for n in names)],
                         capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}).stdout
    assert out.split("\n")[:-1] == [_arg(_as_str(n)) for n in names]
    assert [_unarg(line).encode("utf-8", "surrogateescape") for line in out.split("\n")[:-1]] == names


@settings(max_examples=300, deadline=None)
@given(a=NAMES, b=NAMES)
def test_shown_is_printable_one_line_and_one_to_one(a, b):
    sa, sb = shown(_as_str(a)), shown(_as_str(b))
    assert sa.isprintable() and "\n" not in sa
    assert sa.encode("utf-8")  # no lone surrogate left: safe to print and to store in JSON
    assert (sa == sb) == (a == b)


@settings(max_examples=200, deadline=None)
@given(name=NAMES)
def test_escaped_argument_is_printable_ascii(name):
    # What crosses into the container is plain ASCII: the Docker API carries text (JSON),
    # which would replace bytes that are not UTF-8.
    arg = _arg(_as_str(name))
    assert arg.isascii() and arg.isprintable()


def test_common_names_travel_as_they_are():
    # No escape (and no subshell in the container) for an ordinary name.
    assert _arg("catalog/product/a b-c_d.jpg") == "catalog/product/a b-c_d.jpg"
    assert shown("catalog/product/a b.jpg") == "catalog/product/a b.jpg"
    assert shown("tab\there\nnew\\x") == "tab\\there\\nnew\\\\x"
    assert shown(_as_str(b"bad\xff")) == "bad\\xff"
