"""Least-privilege roles: migrations run as the owner (the user the server is reached as: the
embedded server's superuser, or DATABASE_URL's user), and a pool that does the work connects
as a role granted only what that work needs. Neither role is a superuser or owns a table, so no
statement of theirs can disable a trigger, set session_replication_role or change what the run
store keeps.

* `APP_ROLE`: the web app. Reads and writes the rows of the app's tables (every table but the
  run store's `eval_*` ones and the migrations' bookkeeping); nothing of the run store.
* `EVALS_ROLE`: the eval processes' run store. Reads and adds rows to the store's tables; may
  change or remove rows only where `STORE_CHANGES` says (the run lock, the call cache, an
  unfinished run's status: the triggers of 0005_evidence_kept.sql judge which). A table the
  store gains later is append-only for it until it is named there.

Roles belong to the server, grants to each database (a database copied from a template carries
its grants). Both are made, when missing, after migrations. On the embedded server the pool logs
in as the role (its authentication is `trust`, on a unix socket or 127.0.0.1 only). With
DATABASE_URL, when its user may create the roles and act as them, the pool logs in as that
user and takes the role (`SET ROLE`: a guard against the harness's own statements, which a
session could undo by RESET ROLE); when it may not, the pool works as that user, one role for
everything, and says so in a warning line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.rows import tuple_row

from app.db.embedded import is_embedded

log = logging.getLogger(__name__)

APP_ROLE = "makerspace_app"
EVALS_ROLE = "makerspace_evals"
ROLES = (APP_ROLE, EVALS_ROLE)

STORE_PREFIX = "eval_"  # the run store's tables (evals/record/store_migrations/)
BOOKKEEPING = ("schema_migrations", "eval_schema_migrations")  # what migrations applied
READ_ADD = frozenset({"SELECT", "INSERT"})
READ_WRITE = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})
SEQUENCE = frozenset({"USAGE", "SELECT"})  # nextval for a serial column
# The run store's tables that are not evidence, and what the evals role may do to them beyond
# reading and adding rows.
STORE_CHANGES: dict[str, frozenset[str]] = {
    "eval_runs": frozenset({"UPDATE"}),  # an unfinished run is finished, stopped, resumed
    "eval_run_locks": frozenset({"DELETE"}),  # the lock is let go
    "eval_call_cache": frozenset({"UPDATE", "DELETE"}),  # used_at, replaced and pruned entries
}
# Attributes no working role may have: any of them would let it past the evidence triggers
# or out of its database.
_TOO_MUCH = ("rolsuper", "rolcreatedb", "rolcreaterole", "rolreplication", "rolbypassrls")

_GRANT_LOCK = 727_002  # any fixed number (migrate.py's is 727_001)

Login = Literal["role", "set_role", "one_role"]


class RoleError(RuntimeError):
    """A working role exists with rights it must not have."""


@dataclass(frozen=True)
class Access:
    """How a pool reaches the database for `role`: `conninfo` to log in with, and whether it
    logs in as the role, takes it with SET ROLE, or works as the owner (one role)."""

    role: str
    conninfo: str
    login: Login


async def _rows(conn: psycopg.AsyncConnection[Any], query: str,
                params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query.encode(), params)
        return await cur.fetchall()


def wanted(role: str, name: str, kind: str) -> frozenset[str]:
    """The privileges `role` gets on the relation `name` of kind `kind` (pg_class.relkind)."""
    if name in BOOKKEEPING:
        return frozenset()
    store = name.startswith(STORE_PREFIX)
    if (role == EVALS_ROLE) != store:
        return frozenset()
    if kind == "S":
        return SEQUENCE
    if kind in ("v", "m"):
        return frozenset({"SELECT"})
    if role == APP_ROLE:
        return READ_WRITE
    return READ_ADD | STORE_CHANGES.get(name, frozenset())


async def ensure_roles(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Create the working roles that are missing (two processes at once both succeed); False
    when this user may not create roles. RoleError when one exists with too many rights."""
    checks = " OR ".join(_TOO_MUCH)
    have = set()
    for name, too_much in await _rows(
            conn, f"SELECT rolname, {checks} FROM pg_roles WHERE rolname = ANY(%s)",
            (list(ROLES),)):
        have.add(name)
        if too_much:
            raise RoleError(f"role {name} may do more than its work needs (superuser, create"
                            f" databases or roles, replication or bypass row security):"
                            f" ALTER ROLE {name} NOSUPERUSER NOCREATEDB NOCREATEROLE"
                            " NOREPLICATION NOBYPASSRLS")
    for role in ROLES:
        if role in have:
            continue
        try:
            await conn.execute(sql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                " NOBYPASSRLS").format(sql.Identifier(role)))
        except (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
            pass  # another process made it meanwhile
        except psycopg.errors.InsufficientPrivilege:
            return False
    return True


async def _missing(conn: psycopg.AsyncConnection[Any]
                   ) -> list[tuple[str, str, str, frozenset[str]]]:
    """The relations whose grants to a working role are not what `wanted` says: (name, kind,
    role, wanted)."""
    rows = await _rows(
        conn, "SELECT c.relname, c.relkind::text, r.rolname,"
        " array_remove(array_agg(a.privilege_type), NULL)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " CROSS JOIN pg_roles r LEFT JOIN LATERAL aclexplode(c.relacl) a"
        " ON a.grantee = r.oid WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S',"
        " 'v', 'm') AND r.rolname = ANY(%s) GROUP BY 1, 2, 3", (list(ROLES),))
    return [(name, kind, role, wanted(role, name, kind)) for name, kind, role, has in rows
            if set(has) != wanted(role, name, kind)]


async def grant(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Give each working role exactly its privileges on this database's relations (those that
    already have them are left alone, so a migrated database costs one query). False when
    they could not all be given: a user that does not own a table is only warned by GRANT."""
    changes = await _missing(conn)
    if not changes:
        return True
    async with conn.transaction():
        # Two processes granting on one table at once: one would fail ("tuple concurrently
        # updated"); the second waits, then grants what is already granted.
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_GRANT_LOCK,))
        for role in ROLES:
            await conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(
                sql.Identifier(role)))
        for name, kind, role, want in changes:
            what = sql.SQL("SEQUENCE " if kind == "S" else "TABLE ")
            target = sql.Identifier("public", name)
            who = sql.Identifier(role)
            await conn.execute(sql.SQL("REVOKE ALL ON {}{} FROM {}").format(what, target, who))
            if want:
                await conn.execute(sql.SQL("GRANT {} ON {}{} TO {}").format(
                    sql.SQL(", ").join(sql.SQL(p) for p in sorted(want)), what, target, who))
    return not await _missing(conn)


async def prepare(conn: psycopg.AsyncConnection[Any], conninfo: str, role: str) -> Access:
    """After migrations, on the owner's connection `conn` (autocommit) to `conninfo`: the roles
    made and granted, and how a pool reaches the database as `role`. A user that may not make
    them gets one role for everything, said in a warning line."""
    try:
        made = await ensure_roles(conn) and await grant(conn)
    except psycopg.errors.InsufficientPrivilege:
        made = False  # the roles exist, but this user does not own the tables to grant on
    if made and is_embedded(conninfo):
        return Access(role, make_conninfo(conninfo, user=role), "role")
    if made:
        [(member,)] = await _rows(conn, "SELECT pg_has_role(%s, 'MEMBER')", (role,))
        if member:
            log.info("connecting as the database URL's user, acting as role %s (SET ROLE)",
                     role)
            return Access(role, conninfo, "set_role")
    log.warning("one database role for everything: this user may not create or act as role"
                " %s, so the triggers alone keep the run store's evidence (see"
                " docs/running.md, database roles)", role)
    return Access(role, conninfo, "one_role")


async def take_role(conn: psycopg.AsyncConnection[Any], access: Access) -> None:
    """For a pool's new connection: SET ROLE when that is how it reaches its role."""
    if access.login == "set_role":
        await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(access.role)))
