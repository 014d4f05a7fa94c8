"""Independent readers of the SQL literal grammars sitectl writes, for the tests of
``sitectl.stores.literals`` and of the stores' SQL text. Written from the manuals, not from
sitectl's code:

* MariaDB "String Literals": a single-quoted string ends at the first ``'`` that is neither
  doubled (``''``) nor escaped; backslash escapes ``\\0 \\' \\" \\b \\n \\r \\t \\Z \\\\``,
  ``\\%`` and ``\\_`` keep their backslash, any other ``\\c`` is ``c``. "Hexadecimal
  Literals": ``X'hh..'`` (an even number of hex digits). ``CONVERT(expr USING charset)``
  reads the bytes of ``expr`` in ``charset``. Identifiers: backticks, a doubled backtick is
  one backtick ("Identifier Names").
* PostgreSQL "Lexical Structure" 4.1.2.1-4.1.2.4: ``'...'`` (only ``''`` is special);
  ``E'...'`` with ``\\b \\f \\n \\r \\t``, octal ``\\o \\oo \\ooo``, hex ``\\xh \\xhh``,
  ``\\uXXXX``, ``\\UXXXXXXXX``, any other ``\\c`` is ``c``; a character with code zero is not
  allowed; dollar quoting ``$tag$...$tag$``; quoted identifiers ``"..."`` with ``""``.

Each reader raises :class:`LexError` on text it cannot read (an unterminated literal, a
stray quote), so "the literal parsed back to the value" also proves "no quote ended it early".
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class LexError(ValueError):
    pass


@dataclass(frozen=True)
class Tok:
    kind: str  # str, hex, ident, num, word, punct, dollar
    value: object
    raw: str


_MYSQL_ESC = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a",
              "\\": "\\", "%": "\\%", "_": "\\_"}
_NUM = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_@][A-Za-z0-9_@$]*")
_PG_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def _quoted(text: str, i: int, quote: str, backslash: bool) -> tuple[str, int]:
    """Read a quoted run starting after the opening ``quote`` at ``text[i]``; return (raw body
    characters with escapes kept, index after the closing quote)."""
    out = []
    while True:
        if i >= len(text):
            raise LexError(f"unterminated {quote}-quoted text")
        c = text[i]
        if backslash and c == "\\":
            if i + 1 >= len(text):
                raise LexError("backslash at the end of the text")
            out.append(text[i:i + 2])
            i += 2
        elif c == quote:
            if text[i + 1:i + 2] == quote:
                out.append(quote + quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(c)
            i += 1


def _mysql_string(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            out.append(_MYSQL_ESC.get(body[i + 1], body[i + 1]))
            i += 2
        elif c == "'" and body[i + 1:i + 2] == "'":
            out.append("'")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def mysql_tokens(sql: str) -> list[Tok]:
    """Tokens of MariaDB SQL text (default sql_mode: backslash escapes on). ``CONVERT(X'..'
    USING utf8mb4)`` is folded into one ``str`` token holding the decoded text."""
    toks: list[Tok] = []
    i = 0
    while i < len(sql):
        c = sql[i]
        if c.isspace():
            i += 1
        elif c == "'":
            body, j = _quoted(sql, i + 1, "'", True)
            toks.append(Tok("str", _mysql_string(body), sql[i:j]))
            i = j
        elif c in "xX" and sql[i + 1:i + 2] == "'":
            j = sql.find("'", i + 2)
            if j < 0:
                raise LexError("unterminated X'' literal")
            digits = sql[i + 2:j]
            if len(digits) % 2 or not re.fullmatch(r"[0-9A-Fa-f]*", digits):
                raise LexError(f"bad hexadecimal literal {sql[i:j + 1]!r}")
            toks.append(Tok("hex", bytes.fromhex(digits), sql[i:j + 1]))
            i = j + 1
        elif c == "`":
            body, j = _quoted(sql, i + 1, "`", False)
            toks.append(Tok("ident", body.replace("``", "`"), sql[i:j]))
            i = j
        elif c == '"':
            raise LexError("a double-quoted string (sitectl never writes one)")
        elif m := _NUM.match(sql, i):
            toks.append(Tok("num", m.group(), m.group()))
            i = m.end()
        elif m := _WORD.match(sql, i):
            toks.append(Tok("word", m.group(), m.group()))
            i = m.end()
        else:
            toks.append(Tok("punct", c, c))
            i += 1
    return _fold_convert(toks)


def _fold_convert(toks: list[Tok]) -> list[Tok]:
    out, i = [], 0
    while i < len(toks):
        w = [t.value if t.kind in ("word", "punct") else t.kind for t in toks[i:i + 6]]
        if (len(w) == 6 and str(w[0]).upper() == "CONVERT" and w[1] == "(" and w[2] == "hex"
                and str(w[3]).upper() == "USING" and str(w[4]).lower() == "utf8mb4" and w[5] == ")"):
            raw = toks[i + 2].value.decode("utf-8")  # strict: the bytes must be UTF-8
            out.append(Tok("str", raw, " ".join(t.raw for t in toks[i:i + 6])))
            i += 6
        else:
            out.append(toks[i])
            i += 1
    return out


def _number(text: str):
    return int(text) if re.fullmatch(r"\d+", text) else float(text)


def parse_mysql_literal(text: str):
    """The value of one MariaDB literal (``NULL``, a number, ``'...'``, ``CONVERT(X'..' USING
    utf8mb4)``); :class:`LexError` when ``text`` is not exactly one literal."""
    toks = mysql_tokens(text)
    if len(toks) == 1 and toks[0].kind == "word" and toks[0].value.upper() == "NULL":
        return None
    if len(toks) == 1 and toks[0].kind in ("str", "num"):
        return toks[0].value if toks[0].kind == "str" else _number(toks[0].value)
    if len(toks) == 2 and toks[0].raw == "-" and toks[1].kind == "num":
        return -_number(toks[1].value)
    raise LexError(f"not one literal: {text!r} -> {toks}")


# -- PostgreSQL -------------------------------------------------------------------------------
def _pg_escape_string(body: str) -> str:
    out, i = [], 0
    simple = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
    while i < len(body):
        c = body[i]
        if c == "'":  # only doubled quotes reach here
            out.append("'")
            i += 2
            continue
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(m.group(), 8)))
            i += 1 + m.end()
        elif n == "x" and re.match(r"[0-9A-Fa-f]", body[i + 2:i + 3]):
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2:])
            out.append(chr(int(m.group(), 16)))
            i += 2 + m.end()
        elif n in "uU":
            k = 4 if n == "u" else 8
            digits = body[i + 2:i + 2 + k]
            if not re.fullmatch(f"[0-9A-Fa-f]{{{k}}}", digits):
                raise LexError(f"invalid Unicode escape \\{n}{digits}")
            out.append(chr(int(digits, 16)))
            i += 2 + k
        else:
            out.append(n)
            i += 2
    s = "".join(out)
    if "\0" in s:
        raise LexError("a character with code zero is not allowed in a PostgreSQL string")
    return s


def pg_tokens(sql: str) -> list[Tok]:
    """Tokens of PostgreSQL SQL text: ``str`` (decoded E'' or standard string), ``ident``
    (quoted identifier, decoded), ``dollar`` (dollar-quoted body), ``num``, ``word``, ``punct``
    (``::`` is one token)."""
    toks: list[Tok] = []
    i = 0
    while i < len(sql):
        c = sql[i]
        if c.isspace():
            i += 1
        elif c in "eE" and sql[i + 1:i + 2] == "'":
            body, j = _quoted(sql, i + 2, "'", True)
            toks.append(Tok("str", _pg_escape_string(body), sql[i:j]))
            i = j
        elif c == "'":
            body, j = _quoted(sql, i + 1, "'", False)
            toks.append(Tok("str", body.replace("''", "'"), sql[i:j]))
            i = j
        elif c == '"':
            body, j = _quoted(sql, i + 1, '"', False)
            toks.append(Tok("ident", body.replace('""', '"'), sql[i:j]))
            i = j
        elif c == "$" and (m := _DOLLAR.match(sql, i)):
            tag = m.group()
            end = sql.find(tag, i + len(tag))
            if end < 0:
                raise LexError(f"unterminated {tag} quote")
            toks.append(Tok("dollar", sql[i + len(tag):end], sql[i:end + len(tag)]))
            i = end + len(tag)
        elif sql.startswith("::", i):
            toks.append(Tok("punct", "::", "::"))
            i += 2
        elif m := _NUM.match(sql, i):
            toks.append(Tok("num", m.group(), m.group()))
            i = m.end()
        elif m := _PG_WORD.match(sql, i):
            toks.append(Tok("word", m.group(), m.group()))
            i = m.end()
        else:
            toks.append(Tok("punct", c, c))
            i += 1
    return toks


def parse_pg_literal(text: str):
    """The value of one PostgreSQL literal (``NULL``, a number, a string constant)."""
    toks = pg_tokens(text)
    if len(toks) == 1 and toks[0].kind == "word" and toks[0].value.upper() == "NULL":
        return None
    if len(toks) == 1 and toks[0].kind in ("str", "num"):
        return toks[0].value if toks[0].kind == "str" else _number(toks[0].value)
    if len(toks) == 2 and toks[0].raw == "-" and toks[1].kind == "num":
        return -_number(toks[1].value)
    raise LexError(f"not one literal: {text!r} -> {toks}")


def split_statements(toks: list[Tok]) -> list[list[Tok]]:
    """Token lists between top-level ``;`` tokens (literals can hold ``;`` and stay whole)."""
    out, cur = [], []
    for t in toks:
        if t.kind == "punct" and t.value == ";":
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out
