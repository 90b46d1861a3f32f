"""The working roles (app/db/roles.py): the app's pool works as a role that reads and writes the
app's rows and can do nothing else; the roles are made once, by either of two processes at
once; a role with too many rights is refused; with a server someone else runs, the pool takes
the role by SET ROLE, or works as one role for everything and says so."""

import asyncio
import logging
import uuid

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from app.db import Database, scratch_database
from app.db import roles as roles_module
from app.db.roles import APP_ROLE, EVALS_ROLE, RoleError, ensure_roles, prepare, wanted

# Each refused for want of the right: the app's role owns nothing and is no superuser.
BEYOND_THE_APP = [
    "SET session_replication_role = replica",
    "ALTER TABLE machines DISABLE TRIGGER ALL",
    "ALTER TABLE machines ADD COLUMN x int",
    "DROP TABLE machines",
    "TRUNCATE machines CASCADE",
    "DELETE FROM schema_migrations",
    "CREATE TABLE mine (x int)",
    "CREATE DATABASE mine",
    "CREATE ROLE mine",
]


async def _who(db: Database) -> dict:
    return await db.fetchone("SELECT current_user AS u, session_user AS s")


async def test_the_app_pool_works_as_the_app_role_and_can_do_no_more(server_conninfo,
                                                                      template_db):
    async with scratch_database(server_conninfo, prefix="test", template=template_db) as info:
        db = Database(info, max_size=2, role=APP_ROLE)
        await db.open()
        try:
            assert await _who(db) == {"u": APP_ROLE, "s": APP_ROLE}
            assert db.access is not None and db.access.login == "role"
            # its work: rows of the app's tables, serial ids included
            row = await db.fetchone("INSERT INTO machines (slug, name, brand, category)"
                                    " VALUES ('t-1', 'T', 'B', 'laser') RETURNING id")
            await db.execute("UPDATE machines SET name = 'U' WHERE id = %s", (row["id"],))
            await db.execute("DELETE FROM machines WHERE id = %s", (row["id"],))
            for statement in BEYOND_THE_APP:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    await db.execute(statement)
        finally:
            await db.close()


def test_each_role_gets_only_its_own_tables():
    assert wanted(APP_ROLE, "machines", "r") == {"SELECT", "INSERT", "UPDATE", "DELETE"}
    assert wanted(APP_ROLE, "machines_id_seq", "S") == {"USAGE", "SELECT"}
    assert wanted(APP_ROLE, "eval_cases", "r") == set()
    assert wanted(APP_ROLE, "schema_migrations", "r") == set()
    assert wanted(EVALS_ROLE, "machines", "r") == set()
    for evidence in ("eval_cases", "eval_labels", "eval_points", "eval_a_new_table"):
        assert wanted(EVALS_ROLE, evidence, "r") == {"SELECT", "INSERT"}
    assert wanted(EVALS_ROLE, "eval_runs", "r") == {"SELECT", "INSERT", "UPDATE"}
    assert wanted(EVALS_ROLE, "eval_call_cache", "r") == {"SELECT", "INSERT", "UPDATE",
                                                          "DELETE"}
    assert wanted(EVALS_ROLE, "eval_schema_migrations", "r") == set()


async def test_two_processes_preparing_a_new_database_at_once_both_succeed(server_conninfo):
    async with scratch_database(server_conninfo, prefix="test") as info:
        async with await psycopg.AsyncConnection.connect(info, autocommit=True) as conn:
            await conn.execute("CREATE TABLE things (id serial PRIMARY KEY);"
                               " CREATE TABLE eval_things (id int PRIMARY KEY)")
        conns = [await psycopg.AsyncConnection.connect(info, autocommit=True) for _ in range(2)]
        try:
            got = await asyncio.gather(*(prepare(c, info, APP_ROLE) for c in conns))
        finally:
            for c in conns:
                await c.close()
        assert [a.login for a in got] == ["role", "role"]
        async with await psycopg.AsyncConnection.connect(info, autocommit=True) as conn:
            cur = await conn.execute(
                "SELECT has_table_privilege(%s, 'things', 'DELETE'),"
                " has_table_privilege(%s, 'eval_things', 'DELETE'),"
                " has_table_privilege(%s, 'eval_things', 'INSERT'),"
                " has_sequence_privilege(%s, 'things_id_seq', 'USAGE')",
                (APP_ROLE, EVALS_ROLE, EVALS_ROLE, APP_ROLE))
            assert await cur.fetchone() == (True, False, True, True)


async def test_a_working_role_with_too_many_rights_is_refused(server_conninfo, monkeypatch):
    role = f"test_role_{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(roles_module, "ROLES", (role,))
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as conn:
        await conn.execute(f'CREATE ROLE "{role}" LOGIN CREATEDB')
        try:
            with pytest.raises(RoleError, match=f"role {role} may do more than its work needs"):
                await ensure_roles(conn)
        finally:
            await conn.execute(f'DROP ROLE "{role}"')


async def test_on_another_server_the_pool_takes_the_role_by_set_role(server_conninfo,
                                                                     template_db, monkeypatch):
    monkeypatch.setattr(roles_module, "is_embedded", lambda conninfo: False)
    async with scratch_database(server_conninfo, prefix="test", template=template_db) as info:
        db = Database(info, max_size=2, role=APP_ROLE)
        await db.open()
        try:
            assert db.access is not None and db.access.login == "set_role"
            assert (await _who(db))["u"] == APP_ROLE
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await db.execute("SET session_replication_role = replica")
        finally:
            await db.close()


# A user with no right on a table is refused its GRANT; one with every right but ownership is
# only warned ("no privileges were granted"), and the grants are checked again after.
@pytest.mark.parametrize("rights", ["", "GRANT ALL ON things TO {user}"])
async def test_a_user_that_may_not_make_the_roles_works_as_one_role_and_says_so(
        server_conninfo, monkeypatch, caplog, rights):
    monkeypatch.setattr(roles_module, "is_embedded", lambda conninfo: False)
    plain = f"test_plain_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as admin:
        await admin.execute(f'CREATE ROLE "{plain}" LOGIN')
        await ensure_roles(admin)
        await admin.execute(f'GRANT "{APP_ROLE}" TO "{plain}"')  # it may act as the role
    try:
        async with scratch_database(server_conninfo, prefix="test") as info:
            async with await psycopg.AsyncConnection.connect(info, autocommit=True) as conn:
                await conn.execute("CREATE TABLE things (id int)")  # not the user's own
                if rights:
                    await conn.execute(rights.format(user=f'"{plain}"'))
            mine = make_conninfo(info, user=plain)
            with caplog.at_level(logging.WARNING, logger="app.db.roles"):
                async with await psycopg.AsyncConnection.connect(mine, autocommit=True) as conn:
                    access = await prepare(conn, mine, APP_ROLE)
            assert access.login == "one_role" and access.conninfo == mine
            assert "one database role for everything" in caplog.text
    finally:
        async with await psycopg.AsyncConnection.connect(server_conninfo,
                                                         autocommit=True) as admin:
            await admin.execute(f'DROP ROLE "{plain}"')
