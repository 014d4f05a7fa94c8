"""PostgreSQL access of the Postmill replica: one connection per request (g.db), q(), nextval()."""
import os

import psycopg2
from flask import g
from replica_common.pg import query


def db():
    if "db" not in g:
        g.db = psycopg2.connect(host=os.environ.get("DB_HOST", "127.0.0.1"), dbname="postmill",
                                user="postmill", password="postmill", connect_timeout=5)
    return g.db


def q(sql, args=(), one=False):
    return query(db(), sql, args, one)


def nextval(seq):
    return q("SELECT nextval(%s) AS v", (seq,), one=True)["v"]


def _close(exc):
    conn = g.pop("db", None)
    if conn is not None:
        if exc is None:
            conn.commit()
        conn.close()
