"""The catalogue: machine records and their units (`records`), and finding a machine from a
natural request (`search`)."""

from app.catalog.records import (
    SPEC_FIELDS,
    MachineRecord,
    UnitRecord,
    get_machine,
    insert_machines,
    list_machines,
    search_machines,
    units_for,
)

__all__ = ["SPEC_FIELDS", "MachineRecord", "UnitRecord", "get_machine", "insert_machines",
           "list_machines", "search_machines", "units_for"]
