"""PostgreSQL query helper shared by the Postmill and GitLab replicas (psycopg2, rows as dicts)."""
import psycopg2.extras


def query(conn, sql, args=(), one=False):
    """Run ``sql`` on ``conn``: its rows as dicts (RealDictCursor), [] for a statement that
    returns none; with ``one``, the first row or None."""
    cur = conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor)
    cur.execute(sql, args)
    rows = cur.fetchall() if cur.description else []
    return (rows[0] if rows else None) if one else rows
