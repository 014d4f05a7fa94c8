"""``sitectl.stores.literals``: every value a store or a locator pastes into SQL text.

The oracle is an independent reader of each grammar (``tests/stores/literal_parsers.py``,
written from the MariaDB and PostgreSQL manuals) and, where installed, the real PostgreSQL
parser (``pglast`` wraps libpg_query, PostgreSQL's own lexer and grammar) and psycopg's
quoting. No database server is needed.
"""
from __future__ import annotations

import math
import re

import pglast  # PostgreSQL's own parser (libpg_query), a test dependency
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitectl.stores.literals import m_value, pg_value, q_ident, q_value
from sitectl.stores.sql import Endpoint, MysqlExec, MysqlNetwork, PostgresExec, PostgresNetwork
from tests.stores.literal_parsers import (
    LexError,
    mysql_tokens,
    parse_mysql_literal,
    parse_pg_literal,
    pg_tokens,
)

#: Text a Python str can encode to UTF-8 (no lone surrogates); NUL included.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
#: Strings built from the characters that matter to the quoting, so that every example has some.
NASTY = st.lists(st.sampled_from(list("'\"\\;\n\r\t\0`$%_ xX0E") + ["delimiter", "DeLiMiTeR", "é", "😀",
                                                                  "''", "\\'", "$$", "--", "/*"])).map("".join)
ANY_TEXT = st.one_of(TEXT, NASTY)
PG_TEXT = ANY_TEXT.filter(lambda s: "\0" not in s)  # PostgreSQL text cannot hold NUL at all

_HEX_FORM = re.compile(r"CONVERT\(X'([0-9a-f]*)' USING utf8mb4\)")
_RISKY_CHARS = ("\n", "\r", "'", '"', "\\", ";", "\0")


def pglast_value(literal: str):
    """What PostgreSQL's own parser reads ``SELECT <literal>`` as: the string, or None for NULL."""
    (raw,) = pglast.parse_sql(f"SELECT {literal}")
    val = raw.stmt.targetList[0].val
    assert type(val).__name__ == "A_Const", f"{literal!r} is not one constant: {val}"
    if val.isnull:
        return None
    return val.val.sval


# -- q_ident ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, quoted", [
    ("sales_order", "`sales_order`"),
    ("", "``"),
    ("a`b", "`a``b`"),
    ("``", "``````"),
    ("a b;c'd\"e", "`a b;c'd\"e`"),
    ("é😀", "`é😀`"),
])
def test_q_ident_wraps_in_backticks_and_doubles_inner_backticks(name, quoted):
    assert q_ident(name) == quoted


@given(TEXT)
@example("x`; DROP TABLE t; -- ")
@settings(database=None)
def test_q_ident_reads_back_as_one_identifier_with_the_same_name(name):
    toks = mysql_tokens(q_ident(name))
    assert len(toks) == 1 and toks[0].kind == "ident"
    assert toks[0].value == name


# -- q_value ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, literal", [
    (None, "NULL"),
    (True, "1"),
    (False, "0"),
    (0, "0"),
    (-5, "-5"),
    (10**20, "100000000000000000000"),
    (1.5, "1.5"),
    (1e20, "1e+20"),
    (-0.25, "-0.25"),
    ("", "''"),
    ("abc", "'abc'"),
    ("a'b", r"'a\'b'"),
    ("a\\b", r"'a\\b'"),
    ("a\0b", r"'a\0b'"),
    ("\\'", r"'\\\''"),
    ("x\ny", "'x\ny'"),  # a newline stays raw: q_value is for clients that do not split lines
    ("a;b", "'a;b'"),
    ("DELIMITER", "'DELIMITER'"),
    ("é😀", "'é😀'"),
    ("\\%_", r"'\\%_'"),
])
def test_q_value_exact_literals(value, literal):
    assert q_value(value) == literal


@given(ANY_TEXT)
@example("'; DROP TABLE x; -- ")
@example("\\")
@example("\\'")
@example("''")
@example("\0" * 3)
@settings(database=None)
def test_q_value_string_parses_back_to_the_same_string(s):
    assert parse_mysql_literal(q_value(s)) == s


@given(st.integers())
@settings(database=None)
def test_q_value_integer_parses_back_to_the_same_integer(n):
    assert parse_mysql_literal(q_value(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
@settings(database=None)
def test_q_value_finite_float_parses_back_to_the_same_float(x):
    assert parse_mysql_literal(q_value(x)) == x


@pytest.mark.parametrize("fn", [q_value, m_value, pg_value])
def test_non_finite_floats_are_refused_or_written_as_literals_not_bare_words(fn):
    for x in (math.nan, math.inf, -math.inf):
        try:
            lit = fn(x)
        except ValueError:
            continue
        assert lit.lstrip("-").lower() not in ("nan", "inf"), lit


# -- m_value ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, literal", [
    (None, "NULL"),
    (True, "1"),
    (7, "7"),
    (2.5, "2.5"),
    ("", "''"),
    ("abc", "'abc'"),
    ("tab\there", "'tab\there'"),
    ("é", "'é'"),
    ("`--#/*", "'`--#/*'"),
    ("a'b", "CONVERT(X'612762' USING utf8mb4)"),
    ('a"b', "CONVERT(X'612262' USING utf8mb4)"),
    ("a\\b", "CONVERT(X'615c62' USING utf8mb4)"),
    ("a;b", "CONVERT(X'613b62' USING utf8mb4)"),
    ("a\nb", "CONVERT(X'610a62' USING utf8mb4)"),
    ("a\rb", "CONVERT(X'610d62' USING utf8mb4)"),
    ("\0", "CONVERT(X'00' USING utf8mb4)"),
    ("delimiter", "CONVERT(X'64656c696d69746572' USING utf8mb4)"),
    ("my DeLiMiTeRs", "CONVERT(X'6d792044654c694d6954655273' USING utf8mb4)"),
    ("é;", "CONVERT(X'c3a93b' USING utf8mb4)"),
])
def test_m_value_exact_literals(value, literal):
    assert m_value(value) == literal


@pytest.mark.parametrize("risky", [*_RISKY_CHARS, "delimiter", "DELIMITER", "Delimiter", "dElImItEr"])
def test_m_value_sends_every_risky_string_as_a_utf8mb4_hex_literal(risky):
    s = f"pre{risky}post"
    m = _HEX_FORM.fullmatch(m_value(s))
    assert m, m_value(s)
    assert bytes.fromhex(m.group(1)) == s.encode("utf-8")


@given(ANY_TEXT)
@example("line1\nDELIMITER $$\nline3")
@example("'; DROP TABLE x; -- ")
@settings(database=None)
def test_m_value_string_parses_back_and_hex_form_holds_the_utf8_bytes(s):
    lit = m_value(s)
    assert parse_mysql_literal(lit) == s
    risky = any(c in s for c in _RISKY_CHARS) or "delimiter" in s.lower()
    m = _HEX_FORM.fullmatch(lit)
    assert bool(m) == (risky and s != "")
    if m:
        assert bytes.fromhex(m.group(1)) == s.encode("utf-8")
    else:
        assert lit == q_value(s)


@given(ANY_TEXT)
@settings(database=None)
def test_m_value_text_has_no_newline_semicolon_quote_backslash_or_delimiter_word_a_client_could_split_on(s):
    """Connector/Python splits scripts on the client and looks for DELIMITER line by line: the
    literal text itself must give it nothing to split on."""
    lit = m_value(s)
    if not _HEX_FORM.fullmatch(lit):  # the hex form holds hex digits only between X' and '
        assert lit.startswith("'") and lit.endswith("'")
        assert not any(c in lit[1:-1] for c in _RISKY_CHARS)
    assert "delimiter" not in lit.lower()


# -- pg_value ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value, literal", [
    (None, "NULL"),
    (0, "0"),
    (-5, "-5"),
    (1.5, "1.5"),
    ("", "E''"),
    ("abc", "E'abc'"),
    ("a'b", r"E'a\'b'"),
    ("a\\b", r"E'a\\b'"),
    ("x\ny", "E'x\ny'"),
    ("a;b", "E'a;b'"),
    ("é😀", "E'é😀'"),
    ("$$", "E'$$'"),
])
def test_pg_value_exact_literals(value, literal):
    assert pg_value(value) == literal


@given(PG_TEXT)
@example("'; DROP TABLE x; -- ")
@example("\\")
@example("\\x41\\101\\u0041")  # text that looks like escapes stays text
@settings(database=None)
def test_pg_value_string_parses_back_to_the_same_string(s):
    lit = pg_value(s)
    assert lit.startswith("E'")
    assert parse_pg_literal(lit) == s


@given(PG_TEXT)
@example("'; DROP TABLE x; -- ")
@example("\\x41\\101\\u0041")
@settings(database=None, max_examples=200)
def test_pg_value_string_reads_the_same_in_postgresqls_own_parser(s):
    assert pglast_value(pg_value(s)) == s


@pytest.mark.parametrize("literal, value", [
    (r"E'\101'", "A"), (r"E'\x41'", "A"), (r"E'\u00e9'", "é"), (r"E'\U0001F600'", "😀"),
    (r"E'a''b'", "a'b"), (r"E'\q'", "q"), (r"E'\b\f\n\r\t'", "\b\f\n\r\t"), ("'a\\b'", "a\\b"),
    (r"E'\01'", "\x01"), (r"E'\0123'", "\n3"),
])
def test_the_pg_oracle_reads_escapes_as_postgresql_does(literal, value):
    """The independent reader used above agrees with PostgreSQL's parser on the escapes."""
    assert parse_pg_literal(literal) == value == pglast_value(literal)


@pytest.mark.parametrize("s", ["\x001", "a\x0012", "\x007"])
def test_pg_value_never_yields_a_literal_postgresql_reads_as_another_string(s):
    try:
        got = parse_pg_literal(pg_value(s))
    except ValueError:
        return  # refused up front, as psycopg does
    except LexError:
        return  # refused by the server: no silent change
    assert got == s


def test_pg_value_of_a_lone_nul_is_refused_not_silently_changed():
    try:
        lit = pg_value("a\0b")
    except ValueError:
        return  # refused up front, as psycopg does
    with pytest.raises(LexError):
        parse_pg_literal(lit)
    if pglast is not None:
        with pytest.raises(pglast.parser.ParseError, match="0x00"):
            pglast_value(lit)


def test_pg_value_of_a_bool_is_a_postgresql_boolean_constant():
    assert (pg_value(True).lower(), pg_value(False).lower()) == ("true", "false")


@given(PG_TEXT)
@example("a'b\\c")
@settings(database=None)
def test_pg_value_means_what_psycopgs_quoting_means(s):
    """psycopg writes other bytes ('' or E'' as the text needs); both read back alike."""
    from psycopg import sql

    theirs = sql.Literal(s).as_string(None)
    assert parse_pg_literal(theirs) == parse_pg_literal(pg_value(s)) == s


@pytest.mark.parametrize("fn, parse", [(q_value, parse_mysql_literal), (m_value, parse_mysql_literal),
                                       (pg_value, parse_pg_literal)], ids=["q_value", "m_value", "pg_value"])
@pytest.mark.parametrize("evil", ["x'; DROP TABLE t; --", "x\\'; DROP TABLE t; --", "x\\", "'", "''",
                                  "\\''); SELECT 1; --", "*/ ; /*"])
def test_no_quote_in_a_value_ends_the_literal_early(fn, parse, evil):
    """Pasted into a statement, the literal is one token: SELECT, the value, the semicolon."""
    lit = fn(evil)
    toks = (mysql_tokens if parse is parse_mysql_literal else pg_tokens)(f"SELECT {lit};")
    assert [t.kind for t in toks] == ["word", "str", "punct"]
    assert toks[1].value == evil


# -- SqlSession.literal -------------------------------------------------------------------------
class NoEngineTransport:
    """Stands in for ExecTransport: exec sessions read ``.container`` (for their description)
    and would call ``.run`` to query; ``literal`` builds text only and must never run anything."""

    container = "no-container"

    def run(self, *a, **kw):
        raise AssertionError("SqlSession.literal ran a command")


@pytest.mark.parametrize("session", [
    MysqlExec("shopping", "magentodb", NoEngineTransport()),
    MysqlNetwork("shopping", "magentodb", Endpoint("127.0.0.1", 3306, "root")),
], ids=["exec", "network"])
def test_a_mysql_session_writes_m_value_literals(session):
    assert session.dialect == "mysql"
    assert session.literal("a'b") == "CONVERT(X'612762' USING utf8mb4)"
    assert session.literal("plain") == "'plain'"
    assert session.literal(None) == "NULL"
    assert session.literal(3) == "3"


@pytest.mark.parametrize("session", [
    PostgresExec("reddit", "postmill", NoEngineTransport()),
    PostgresNetwork("reddit", "postmill", Endpoint("127.0.0.1", 5432, "postgres")),
], ids=["exec", "network"])
def test_a_postgres_session_writes_pg_value_literals(session):
    assert session.dialect == "postgres"
    assert session.literal("a'b") == r"E'a\'b'"
    assert session.literal("plain") == "E'plain'"
    assert session.literal(None) == "NULL"
    assert session.literal(3) == "3"
