"""The eval's stand-ins for the tools that would write or reach the network: the same tool
(name, description, argument schema, kind) with a run that writes and fetches nothing."""

from __future__ import annotations

from typing import Any

from app.capabilities import Tool, ToolContext

STUBBED_KINDS = ("write", "action", "live_read")
# What each stub answers, shaped like the real tool's success so the turn reads naturally.
STUB_RESULTS: dict[str, dict[str, Any]] = {
    "report_issue": {"ticket_id": 0, "filed": True},
    "identify_tools": {"recorded": True},
    "report_correction": {"recorded": True, "note": "Staff will review it."},
    "propose_change": {"change_id": 0, "status": "pending review"},
    "read_page": {"text": "", "note": "The page could not be read."},
}
ACTION_STUB = {
    "proposed": True,
    "proposal_id": "eval-stub",
    "note": "A confirmation card is shown to the person. Nothing has changed yet.",
}


def stub(tool: Tool) -> Tool:
    """The same tool (name, description, schema, kind) with a run that writes and fetches
    nothing. The loop records every call, so the stub need not."""

    async def run(ctx: ToolContext, args: Any) -> dict[str, Any]:
        if tool.kind == "action":
            return {**ACTION_STUB, "summary": f"{tool.name} {args.model_dump_json()}"}
        return dict(STUB_RESULTS.get(tool.name, {"ok": True}))

    return tool.with_run(run)


def stub_tools(tools: list[Tool]) -> list[Tool]:
    return [stub(t) if t.kind in STUBBED_KINDS else t for t in tools]
