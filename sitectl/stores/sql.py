"""SQL sessions: how a SQL store reaches its server.

A MySQL or PostgreSQL store builds SQL text and hands it to a :class:`SqlSession`; the store's
logic (what to snapshot, how to detect and restore changes, how to fingerprint) is the same for
every session. Two ways to reach a server:

* **exec** (:class:`MysqlExec`, :class:`PostgresExec`): the server's own command-line client
  (``mysql``, ``psql``) run inside the site's container through ``docker exec``. Works with the
  real WebArena images as they are, with no port and no password.
* **network** (:class:`MysqlNetwork`, :class:`PostgresNetwork`): a connection over TCP with
  mysql-connector-python or psycopg from a process beside the site (a sidecar sharing the site's
  network namespace, or any host that can reach the server). Needs an account reachable over
  TCP; its password comes from an environment variable, never from a file or a log.

Both return the same thing: rows of text values, exactly what the server sends in its text
protocol, so a store's parsing does not depend on the session. MySQL ``NULL`` is ``None``;
PostgreSQL ``NULL`` reads as ``""`` (what ``psql``'s unaligned output prints).

Batching: a site asks all its stores what changed in one round trip. A session turns a query
into a :class:`Query` request; :func:`sitectl.stores.transport.run_batch` runs every request that
can travel through ``docker exec`` in one exec and the others directly.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random

from sitectl.errors import StoreError
from sitectl.stores.literals import m_value, pg_value
from sitectl.stores.transport import budget_chunks, out_lines

#: Folder inside the container where dumps are staged.
STAGE = "/var/lib/sitectl/stage"
#: Bytes one SQL text may have: it travels as one argument of ``mysql -e`` / ``psql -c``
#: (Linux caps one argument at 128 KiB).
SQL_BUDGET = 100_000
#: Attempts at a snapshot while the application writes, and the pause before the next (s, times
#: the attempt's number).
SNAPSHOT_ATTEMPTS = 5
SNAPSHOT_RETRY_S = 0.5
#: Times a transaction the server ended as a deadlock victim is run (the server rolled all of
#: it back, so running it again is running it once), and the longest pause before the next (s).
DEADLOCK_ATTEMPTS = 4
DEADLOCK_PAUSE_S = 0.5
_DEADLOCK = re.compile(r"deadlock detected|Deadlock found when trying to get lock")


def deadlocked(error: object) -> bool:
    """Whether ``error`` (an exception or a result's error text) says the server chose the
    transaction as a deadlock's victim: PostgreSQL's ``deadlock detected`` (SQLSTATE 40P01),
    MariaDB's ``ERROR 1213 (40001): Deadlock found when trying to get lock`` (sources: the
    PostgreSQL manual, "Explicit Locking" §13.3.4; MariaDB's error code list)."""
    return error is not None and bool(_DEADLOCK.search(str(error)))


def retry_deadlocks(run):
    """``run()``, run again (up to :data:`DEADLOCK_ATTEMPTS` in all, after a random pause up
    to :data:`DEADLOCK_PAUSE_S`) while it raises a :class:`StoreError` that says the server
    ended its transaction as a deadlock's victim: installing triggers or restoring rows while
    the application writes can lock tables in the opposite order to one of its transactions.
    Only for work done in one transaction (nothing of it stays after the rollback).

    Raises:
        StoreError: the last attempt's error, or another error at once.
    """
    return Retrying(retry=retry_if_exception(lambda e: isinstance(e, StoreError) and deadlocked(e)),
                    stop=stop_after_attempt(DEADLOCK_ATTEMPTS), wait=wait_random(0.05, DEADLOCK_PAUSE_S),
                    reraise=True)(run)


def take_when_quiet(take, what: str, stop: str) -> int:
    """Run ``take`` (one snapshot attempt, returning ``(tables copied, what was written
    meanwhile)``) until an attempt reports nothing written, at most :data:`SNAPSHOT_ATTEMPTS`
    times, pausing :data:`SNAPSHOT_RETRY_S` × the attempt's number in between. Returns the
    tables copied.

    Raises:
        StoreError: every attempt was written: ``"{what}, N times (last: ...); ... {stop} and
            take it again"``.
    """
    for attempt in range(1, SNAPSHOT_ATTEMPTS + 1):
        tables, written = take()
        if not written:
            return tables
        if attempt < SNAPSHOT_ATTEMPTS:
            time.sleep(SNAPSHOT_RETRY_S * attempt)
    raise StoreError(f"{what}, {SNAPSHOT_ATTEMPTS} times (last: {', '.join(written[:5])}"
                     f"{' ...' if len(written) > 5 else ''}); a copy taken then would not be one state. {stop} and "
                     "take it again")


#: psql flags: no ~/.psqlrc, quiet, unaligned, tuples only, tab-separated, stop on error.
PSQL_FLAGS = ["-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1"]


def mysql_unescape(v: str) -> str | None:
    """Undo ``mysql --batch`` escaping (\\t \\n \\\\ \\0); ``NULL`` becomes None."""
    if v == "NULL":
        return None
    if "\\" not in v:
        return v
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\" and i + 1 < len(v):
            n = v[i + 1]
            out.append({"t": "\t", "n": "\n", "\\": "\\", "0": "\0"}.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass
class SqlResult:
    """Outcome of one query: ``rows`` (text values) when it ran, else ``error`` (the server's or
    the client's message)."""

    rows: list[list[str | None]] | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.rows is not None


@dataclass
class Query:
    """A query waiting to run: through ``docker exec`` when its session has an argv for it
    (batched with other commands), else directly."""

    session: "SqlSession"
    sql: str

    @property
    def argv(self) -> list[str] | None:
        """The command that runs this query through ``docker exec``, or None (network)."""
        return self.session.argv(self.sql)

    def decode(self, rc: int, out: str) -> SqlResult:
        return SqlResult(self.session.parse(out)) if rc == 0 else SqlResult(None, out.strip()[-1500:])

    def execute(self) -> SqlResult:
        try:
            return SqlResult(self.session.query(self.sql, "query"))
        except StoreError as e:
            return SqlResult(None, str(e))


class SqlSession(ABC):
    """How a SQL store reaches one database.

    Attributes:
        dialect: ``mysql`` or ``postgres``.
        database: the application's database.
        where: a short description for messages (never a password).
    """

    dialect = ""

    def literal(self, value) -> str:
        """``value`` (a string, number, bool or None) as a SQL literal of this session's dialect
        (:func:`sitectl.stores.literals.m_value` or :func:`~sitectl.stores.literals.pg_value`)."""
        return m_value(value) if self.dialect == "mysql" else pg_value(value)

    def __init__(self, site: str, database: str):
        self.site = site
        self.database = database
        self.where = ""

    @abstractmethod
    def query(self, sql: str, what: str, timeout: float = 600) -> list[list[str | None]]:
        """Run ``sql`` (one or several ``;``-separated statements; MySQL scripts may use
        ``DELIMITER``) and return the rows of every statement that returns rows, in order.

        MySQL: each statement commits on its own unless the text opens a transaction.
        PostgreSQL: the whole text is one implicit transaction (simple-query protocol, as ``psql -c``).

        Raises:
            StoreError: the server or the client refused; names the site and ``what``.
        """

    def query_chunks(self, stmts: list[str], what: str, prelude: str = "") -> None:
        """Run ``stmts`` in as few calls as possible, each text (``prelude``, e.g. session
        settings, first) under :data:`SQL_BUDGET` bytes."""

        for chunk in budget_chunks(stmts, SQL_BUDGET, len(prelude.encode())):
            self.query(prelude + "\n".join(chunk), what)

    def argv(self, sql: str) -> list[str] | None:
        """The command that runs ``sql`` inside the container, or None (network sessions)."""
        return None

    def parse(self, out: str) -> list[list[str | None]]:
        """Rows from the output of :meth:`argv`'s command."""
        raise NotImplementedError

    def request(self, sql: str) -> Query:
        """``sql`` as a request for :func:`sitectl.stores.transport.run_batch`."""
        return Query(self, sql)

    @abstractmethod
    def dump(self, args: list[str], out: str, what: str) -> None:
        """Run the server's dump program (``mysqldump`` / ``pg_dump``) with ``args`` (connection
        flags are added) and write its output to file ``out``: inside the container for exec
        sessions, beside this process for network sessions (see :attr:`files_local`)."""

    @abstractmethod
    def load(self, program: str, args: list[str], src: str, what: str) -> None:
        """Feed file ``src`` to ``program`` (``mysql`` reads it on stdin; ``pg_restore`` gets
        it as its last argument), connection flags added."""

    def dump_into_table(self, args: list[str], table: str, what: str) -> None:
        """Run the dump program with ``args`` and keep its text in ``table`` (columns
        ``n serial, line text``), one row per line, in order. PostgreSQL only.

        Raises:
            StoreError: the dump or the copy failed.
        """
        raise StoreError(f"{self.site}: {self.dialect} sessions cannot keep a dump in a table")

    #: True when :meth:`dump` and :meth:`load` files are on this process's file system.
    files_local = False


# -- exec -------------------------------------------------------------------------------------
class _ExecSession(SqlSession):
    def __init__(self, site: str, database: str, transport, client: list[str]):
        super().__init__(site, database)
        self.transport = transport
        self.client = client
        self.where = f"{client[0]} in container {transport.container}"

    def query(self, sql: str, what: str, timeout: float = 600) -> list[list[str | None]]:
        return self.parse(self.transport.run(self.argv(sql), f"{self.dialect}:{self.database} {what}", timeout))


#: The database of sitectl's change tracking in a MySQL/MariaDB server.
TRACK_DB_NAME = "sitectl"
#: Sent first in every MySQL session of the stores: ``NO_AUTO_VALUE_ON_ZERO`` added to the
#: session's modes, so that 0 in an AUTO_INCREMENT column is stored as 0 and not as the next
#: value (MariaDB Knowledge Base, "SQL_MODE": "NO_AUTO_VALUE_ON_ZERO"). Without it, copying
#: Magento's install rows with id 0 (``store``, ``customer_group``) fails with error 1062.
MYSQL_SESSION = (
    "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO');\n"
    # MySQL's GROUP_CONCAT stops at 1,024 bytes (MariaDB's at 1 MiB): the definition hashes and
    # the fingerprints' column lists are GROUP_CONCATs (MySQL 8.0 Reference Manual, "Server System
    # Variables", group_concat_max_len).
    "SET SESSION group_concat_max_len = 1073741824;\n"
    # MySQL 8 and later answer information_schema.TABLES (AUTO_INCREMENT) from statistics cached
    # for up to a day unless told (MySQL 8.0 Reference Manual, information_schema_stats_expiry);
    # MariaDB has no such cache nor variable, so the statement is chosen by the server.
    "SET @sitectl_q = IF(VERSION() LIKE '%MariaDB%', 'DO 0', 'SET SESSION information_schema_stats_expiry = 0');\n"
    "PREPARE sitectl_q FROM @sitectl_q; EXECUTE sitectl_q; DEALLOCATE PREPARE sitectl_q;\n"
    # InnoDB's table ids: information_schema.INNODB_SYS_TABLES on MariaDB, INNODB_TABLES on
    # MySQL 8 and later; the stores read them through this view, made once per server.
    f"CREATE DATABASE IF NOT EXISTS {TRACK_DB_NAME};\n"
    "SET @sitectl_q = IF((SELECT COUNT(*) FROM information_schema.views WHERE table_schema = 'sitectl'"
    " AND table_name = 'innodb_ids') > 0, 'DO 0', CONCAT('CREATE VIEW sitectl.innodb_ids AS SELECT name, table_id"
    " FROM information_schema.', IF(VERSION() LIKE '%MariaDB%', 'innodb_sys_tables', 'innodb_tables')));\n"
    "PREPARE sitectl_q FROM @sitectl_q; EXECUTE sitectl_q; DEALLOCATE PREPARE sitectl_q;\n"
)


class MysqlExec(_ExecSession):
    """The ``mysql`` client inside the container.

    Args:
        site: site name, for messages.
        database: the application's database.
        transport: :class:`sitectl.stores.transport.ExecTransport` of the site's container.
        client: argv prefix of a privileged client (default ``["mysql", "-u", "root"]``).
    """

    dialect = "mysql"

    def __init__(self, site: str, database: str, transport, client: list[str] | None = None):
        super().__init__(site, database, transport, client or ["mysql", "-u", "root"])

    def argv(self, sql: str) -> list[str]:
        return [*self.client, "-N", "-B", "-e", MYSQL_SESSION + sql]

    def parse(self, out: str) -> list[list[str | None]]:
        return [[mysql_unescape(c) for c in line.split("\t")] for line in out_lines(out) if line != ""]

    def dump(self, args: list[str], out: str, what: str) -> None:
        dump = ["mysqldump", *self.client[1:], *args]
        self.transport.run(["sh", "-c", 'out=$1; shift; "$@" > "$out"', "sh", out, *dump], what)

    def load(self, program: str, args: list[str], src: str, what: str) -> None:
        self.transport.run(["sh", "-c", 'in=$1; shift; "$@" < "$in"', "sh", src, *self.client, *args], what)


class PostgresExec(_ExecSession):
    """``psql`` inside the container.

    Args:
        client: argv prefix of a superuser ``psql`` (default ``["psql", "-U", "postgres"]``;
            GitLab's omnibus wrapper is ``["gitlab-psql"]``).
    """

    dialect = "postgres"

    def __init__(self, site: str, database: str, transport, client: list[str] | None = None):
        super().__init__(site, database, transport, client or ["psql", "-U", "postgres"])

    def argv(self, sql: str) -> list[str]:
        return [*self.client, "-d", self.database, *PSQL_FLAGS, "-c", sql]

    def parse(self, out: str) -> list[list[str | None]]:
        return [line.split("\t") for line in out_lines(out) if line != ""]

    def _tool(self, program: str) -> list[str]:
        """argv prefix of a client program (``pg_dump``, ``pg_restore``) with the same connection
        as ``client``: its flags with ``psql`` replaced; GitLab's ``gitlab-psql`` wrapper maps to
        the embedded program over the omnibus socket (research/fast-reset.md §0)."""
        if self.client[0] == "gitlab-psql":
            return [f"/opt/gitlab/embedded/bin/{program}", "-h", "/var/opt/gitlab/postgresql", "-U", "gitlab-psql"]
        return [program, *self.client[1:]]

    def dump(self, args: list[str], out: str, what: str) -> None:
        self.transport.run([*self._tool("pg_dump"), *args, "-f", out, self.database], what)

    def dump_into_table(self, args: list[str], table: str, what: str) -> None:

        path = f"{STAGE}/{uuid.uuid4().hex}.sql"
        self.transport.run(["mkdir", "-p", STAGE], what)
        try:
            self.dump(args, path, what)
            # CSV with separator, quote and NULL bytes that never occur in a dump: one line, one
            # row, taken as it is (no backslash processing); psql's \copy reads the file here.
            self.transport.run([*self.client, "-d", self.database, *PSQL_FLAGS, "-c",
                        f"\\copy {table}(line) FROM '{path}' WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', NULL E'\\x03')"],
                       what)
        finally:
            self.transport.engine.exec(self.transport.container, ["rm", "-f", path])

    def load(self, program: str, args: list[str], src: str, what: str) -> None:
        self.transport.run([*self._tool(program), *args, "-d", self.database, src], what)


# -- network ----------------------------------------------------------------------------------
@dataclass
class Endpoint:
    """Where a network session connects.

    Attributes:
        host: host name or address (``127.0.0.1`` from a sidecar in the site's network namespace).
        port: TCP port.
        user: account name.
        password_env: name of the environment variable holding the password (None: no password).
    """

    host: str
    port: int
    user: str
    password_env: str | None = None

    def password(self, site: str) -> str | None:
        """The password from the environment.

        Raises:
            StoreError: the variable is named but not set.
        """
        if not self.password_env:
            return None
        if self.password_env not in os.environ:
            raise StoreError(f"{site}: environment variable {self.password_env} (the database password) is not set")
        return os.environ[self.password_env]


def _local_tool(site: str, program: str) -> str:
    path = shutil.which(program)
    if not path:
        raise StoreError(f"{site}: {program} is not installed beside this process (network sessions run it locally)")
    return path


def _run_local(site: str, argv: list[str], env: dict, what: str, stdin=None, stdout=None) -> None:
    try:
        p = subprocess.run(argv, env={**os.environ, **env}, stdin=stdin, stdout=stdout or subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StoreError(f"{site}: {what} failed: {e}") from None
    if p.returncode != 0:
        raise StoreError(f"{site}: {what} failed (exit code {p.returncode}): "
                         f"{p.stderr.decode(errors='replace').strip()[-1500:]}")


class MysqlNetwork(SqlSession):
    """mysql-connector-python over TCP; a new connection per call, so no session state
    (``@sitectl_off``, ``FOREIGN_KEY_CHECKS``) outlives the statements that set it.

    Values are read raw (the server's text), as the ``mysql`` client prints them. Needs
    Connector/Python 9.2 or later: several statements in one ``execute`` and ``fetchsets()``
    (source: dev.mysql.com/doc/connector-python, "Executing Multiple Statements"). That
    connector splits scripts on the client and looks for ``DELIMITER`` line by line, so the
    stores send string values with newlines or quotes as hex literals (``q_value``).

    Args:
        site: site name, for messages.
        database: the application's database.
        endpoint: where to connect; the account must be allowed to create databases and
            triggers and views and read InnoDB's table list (``PROCESS``).
    """

    dialect = "mysql"
    files_local = True

    def __init__(self, site: str, database: str, endpoint: Endpoint):
        super().__init__(site, database)
        self.endpoint = endpoint
        self.where = f"mysql://{endpoint.user}@{endpoint.host}:{endpoint.port}"

    def _connect(self):
        import mysql.connector  # noqa: PLC0415 - slow third-party module, only for network sessions

        e = self.endpoint
        try:
            return mysql.connector.connect(host=e.host, port=e.port, user=e.user, password=e.password(self.site) or "",
                                           autocommit=True, raw=True, connection_timeout=10)
        except mysql.connector.Error as err:
            raise StoreError(f"{self.site}: cannot connect to {self.where}: {err}") from None

    def query(self, sql: str, what: str, timeout: float = 600) -> list[list[str | None]]:
        import mysql.connector  # noqa: PLC0415 - slow third-party module, only for network sessions

        cnx = self._connect()
        try:
            with cnx.cursor(raw=True) as cur:
                cur.execute(MYSQL_SESSION + sql)
                rows: list[list[str | None]] = []
                for _stmt, result in cur.fetchsets():
                    for r in result or []:
                        rows.append([None if v is None else bytes(v).decode("utf-8", "surrogateescape") for v in r])
                return rows
        except (mysql.connector.Error, AttributeError, TypeError, ValueError) as err:
            # AttributeError/TypeError: a connector older than 9.2 (no fetchsets / multi statements).
            raise StoreError(f"{self.site}: mysql:{self.database} {what} failed ({self.where}): "
                             f"{type(err).__name__}: {err}") from None
        finally:
            cnx.close()

    def _flags(self) -> tuple[list[str], dict]:
        e = self.endpoint
        pw = e.password(self.site)
        return [f"--host={e.host}", f"--port={e.port}", f"--user={e.user}"], ({"MYSQL_PWD": pw} if pw else {})

    def dump(self, args: list[str], out: str, what: str) -> None:
        flags, env = self._flags()
        with open(out, "wb") as f:
            _run_local(self.site, [_local_tool(self.site, "mysqldump"), *flags, *args], env, what, stdout=f)

    def load(self, program: str, args: list[str], src: str, what: str) -> None:
        flags, env = self._flags()
        with open(src, "rb") as f:
            _run_local(self.site, [_local_tool(self.site, program), *flags, *args], env, what, stdin=f)


class PostgresNetwork(SqlSession):
    """psycopg over TCP; a new connection per call (autocommit; a multi-statement text runs as
    one implicit transaction through the simple-query protocol, as with ``psql -c``). Values
    are read as the server's text (``PGresult.get_value``), as ``psql`` prints them.

    Args:
        endpoint: where to connect; the account must be a superuser (the restore sets
            ``session_replication_role``; tracking functions are ``SECURITY DEFINER``).
    """

    dialect = "postgres"
    files_local = True

    def __init__(self, site: str, database: str, endpoint: Endpoint):
        super().__init__(site, database)
        self.endpoint = endpoint
        self.where = f"postgresql://{endpoint.user}@{endpoint.host}:{endpoint.port}/{database}"

    def _connect(self):
        import psycopg  # noqa: PLC0415 - slow third-party module, only for network sessions

        e = self.endpoint
        try:
            return psycopg.connect(host=e.host, port=e.port, user=e.user, password=e.password(self.site),
                                   dbname=self.database, autocommit=True, connect_timeout=10)
        except psycopg.Error as err:
            raise StoreError(f"{self.site}: cannot connect to {self.where}: {err}") from None

    def query(self, sql: str, what: str, timeout: float = 600) -> list[list[str | None]]:
        import psycopg  # noqa: PLC0415 - slow third-party module, only for network sessions

        with self._connect() as conn:
            try:
                cur = conn.execute(sql)  # no parameters: simple-query protocol, several statements allowed
                rows: list[list[str | None]] = []
                while True:
                    res = cur.pgresult
                    if res is not None and res.nfields:
                        for i in range(res.ntuples):
                            rows.append([(res.get_value(i, j) or b"").decode("utf-8", "surrogateescape")
                                         for j in range(res.nfields)])
                    if not cur.nextset():
                        return rows
            except psycopg.Error as err:
                raise StoreError(f"{self.site}: postgres:{self.database} {what} failed ({self.where}): {err}") from None

    def _env(self) -> dict:
        e = self.endpoint
        env = {"PGHOST": e.host, "PGPORT": str(e.port), "PGUSER": e.user, "PGDATABASE": self.database}
        pw = e.password(self.site)
        if pw:
            env["PGPASSWORD"] = pw
        return env

    def dump(self, args: list[str], out: str, what: str) -> None:
        _run_local(self.site, [_local_tool(self.site, "pg_dump"), *args, "-f", out, self.database], self._env(), what)

    def _check_pg_dump(self, what: str) -> None:
        """A local ``pg_dump`` of another major version than the server's writes settings the
        server may not know (e.g. ``SET transaction_timeout`` from 17): refuse it up front."""
        out = subprocess.run([_local_tool(self.site, "pg_dump"), "--version"], capture_output=True, text=True).stdout
        local = out.strip().split()[-1].split(".")[0] if out.strip() else "?"
        server = str(int(self.query("SHOW server_version_num", what)[0][0]) // 10000)
        if local != server:
            raise StoreError(f"{self.site}: {what}: the pg_dump beside this process is version {local}, the "
                             f"server is {server}; install the server's major version of the client tools")

    def dump_into_table(self, args: list[str], table: str, what: str) -> None:

        import psycopg  # noqa: PLC0415 - slow third-party module, only for network sessions

        self._check_pg_dump(what)
        with tempfile.TemporaryDirectory(prefix="sitectl-") as d:
            path = os.path.join(d, "dump.sql")
            self.dump(args, path, what)
            with open(path, encoding="utf-8", newline="\n") as f:
                lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        with self._connect() as conn:
            try:
                with conn.cursor().copy(f"COPY {table}(line) FROM STDIN") as cp:
                    for line in lines:
                        cp.write_row((line,))
            except psycopg.Error as err:
                raise StoreError(f"{self.site}: {what} failed ({self.where}): {err}") from None

    def load(self, program: str, args: list[str], src: str, what: str) -> None:
        _run_local(self.site, [_local_tool(self.site, program), *args, "-d", self.database, src], self._env(), what)
