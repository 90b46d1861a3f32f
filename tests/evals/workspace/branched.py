"""The scenario of docs/scenarios.md, whose frozen responses have every part the editor must keep
as written, and the lines an edit changed in it: what the frozen responses' tests share."""

import difflib

from app.capabilities import REGISTRY

TICKETS = REGISTRY.tool("list_open_tickets").contract()
UPDATE = REGISTRY.tool("update_ticket").contract()
# The scenario of docs/scenarios.md: a state, branches by state and by argument (with a delay,
# a flow mapping over two lines and a comment), expressions, a sequence, on_confirm.
BRANCHED = f"""\
- id: ticket-closes-after-confirmation
  context: {{as: staff, path: /staff/tickets}}
  visitor: {{who: the lab technician, wants: to close ticket 7 and see the queue}}
  confirm: true
  response_state: {{states: [open, resolved], initial: open}}
  tool_responses:
    update_ticket:
      contract: {UPDATE}
      response:
        proposed: true
        proposal_id: "p-{{{{ args.ticket_id }}}}"
        summary: "Ticket #{{{{ args.ticket_id }}}}: status open → {{{{ args.status }}}}"
        note: A confirmation card is shown to the person. Nothing has changed yet.
      on_confirm: resolved              # confirming the card closes the ticket
    list_open_tickets:
      contract: {TICKETS}
      branches:
        - state: resolved
          response: {{tickets: [], count: 0}}
          exhausted: repeat_last
        - arguments: {{slug_in: [trotec-speedy-400, null]}}
          responses:
            - count: 1
              tickets: [{{id: 7, title: Smoke when cutting, status: open,
                         machine: Trotec Speedy 400, slug: trotec-speedy-400}}]
            - count: 1
              tickets: [{{id: 7, title: Smoke when cutting, status: open,
                         machine: Trotec Speedy 400,
                         slug: "{{{{ args.slug | default('trotec-speedy-400') }}}}"}}]
            - {{tickets: [], count: 0}}
          exhausted: repeat_last
          delay_s: 2                    # a slow queue
      response: {{tickets: [], count: 0}}  # another machine's queue: empty
      exhausted: repeat_last
  expect_actions:
    - tool: update_ticket
      arguments: {{ticket_id: 7, status: resolved}}
"""
SID = "ticket-closes-after-confirmation"


def changed_lines(before, after):
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                  lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]
