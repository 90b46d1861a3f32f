"""The catalogue: machine records and their units (`records`), and finding a machine from a
natural request (`find`)."""

from app.catalog import find
from app.catalog.find import Found, Size, index, overview, search, size
from app.catalog.records import (
    SPEC_FIELDS,
    MachineRecord,
    UnitRecord,
    get_machine,
    insert_machines,
    list_machines,
    public,
    units_for,
)

__all__ = ["SPEC_FIELDS", "Found", "MachineRecord", "Size", "UnitRecord", "find", "get_machine",
           "index", "insert_machines", "list_machines", "overview", "public", "search", "size",
           "units_for"]
