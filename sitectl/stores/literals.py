"""SQL literals and identifiers as the stores and the locators write them into SQL text:
MariaDB/MySQL (:func:`q_ident`, :func:`q_value`, :func:`m_value`) and PostgreSQL
(:func:`pg_value`). Every value a store or a locator pastes into SQL goes through one of these.

Sources: MariaDB "String Literals" (backslash escapes, ``X'...'`` hexadecimal literals,
``CONVERT(... USING ...)``); PostgreSQL "Lexical Structure" §4.1.2.2 (``E'...'`` escape strings,
read the same whatever ``standard_conforming_strings`` is).
"""
from __future__ import annotations

import math
import re


def q_ident(name: str) -> str:
    """Quote an identifier with backticks."""
    return "`" + name.replace("`", "``") + "`"


def q_value(v) -> str:
    """A SQL literal for a value read back from JSON (numbers, strings, null).

    Raises:
        ValueError: a float that is not finite (NaN, infinities: Python's ``json.loads`` reads
            them, SQL has no literal for them, and ``repr`` would give the bare word ``nan``).
    """
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"no SQL literal for the float {v!r}")
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v).replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0")
    return f"'{s}'"


_RISKY = re.compile(r"[\n\r'\"\\;\x00]|delimiter", re.I)


def m_value(v) -> str:
    """A MariaDB/MySQL literal as the stores send it: :func:`q_value`, except that a string
    holding a newline, a quote, a backslash, ``;`` or the word ``delimiter`` is sent as
    ``CONVERT(X'...' USING utf8mb4)`` (character semantics, the column's collation), so no
    client that splits scripts itself (Connector/Python) can misread it."""
    if isinstance(v, str) and _RISKY.search(v):
        return f"CONVERT(X'{v.encode().hex()}' USING utf8mb4)" if v else "''"
    return q_value(v)


def pg_value(v) -> str:
    """A PostgreSQL literal: strings as ``E'...'`` (backslash escapes, whatever
    ``standard_conforming_strings`` is), booleans as ``TRUE``/``FALSE``, numbers and NULL as
    they are.

    Raises:
        ValueError: a string holding NUL (PostgreSQL's text types cannot hold it, and in an
            ``E''`` string ``\\0`` before octal digits is another character; psycopg refuses
            it too), or a float that is not finite (:func:`q_value`).
    """
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str) and "\0" in v:
        raise ValueError("PostgreSQL text cannot hold NUL (0x00)")
    lit = q_value(v)
    return "E" + lit if lit.startswith("'") else lit
