"""Who is asking: a signed-in person with a role, or nobody (anonymous)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.db import Database

Role = Literal["student", "staff", "super_admin"]
ROLES: tuple[Role, ...] = ("student", "staff", "super_admin")
# The audience names a capability may list; "anonymous" is nobody signed in.
AUDIENCES = ("anonymous", *ROLES)


@dataclass(frozen=True)
class Identity:
    person_id: int
    handle: str
    name: str
    role: Role
    title: str = ""
    email: str | None = None  # people who sign in with the university's provider

    @property
    def audience(self) -> str:
        return self.role


def audience_of(identity: Identity | None) -> str:
    return identity.role if identity else "anonymous"


class UnknownRoleError(ValueError):
    """A role name that is not one of ROLES."""


async def demo_identity(db: Database, role: str) -> Identity:
    """The demo seed's person holding `role` (the demo sign-in)."""
    if role not in ROLES:
        raise UnknownRoleError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    row = await db.fetchone("SELECT * FROM people WHERE role = %s ORDER BY id LIMIT 1", (role,))
    if row is None:
        raise LookupError(f"no person with role {role!r} in the database")
    return identity_from_row(row)


async def identity_by_id(db: Database, person_id: int) -> Identity | None:
    row = await db.fetchone("SELECT * FROM people WHERE id = %s", (person_id,))
    return identity_from_row(row) if row else None


def identity_from_row(row: dict) -> Identity:
    return Identity(row["id"], row["handle"], row["name"], row["role"], row["title"],
                    row.get("email"))
