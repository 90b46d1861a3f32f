from evals.checks import CHECKS
from evals.fixtures.catalog import fixtures_for
from evals.record.transcript import AttachedManual, ToolCall, Transcript


def check(kind, answer="", *, calls=None, catalog="demo", attached=None, evidence=None, **args):
    spec = CHECKS[kind]
    turn = Transcript(answer=answer, tool_calls=[ToolCall.model_validate(c) for c in calls or []],
                      attached_manuals=[AttachedManual.model_validate(m) for m in attached or []],
                      evidence=evidence or {})
    return spec.check(turn, spec.args.model_validate(args), fixtures_for(catalog))


def call(name, arguments=None, result=None, kind="read"):
    return {"name": name, "arguments": arguments or {}, "result": result or {}, "kind": kind}
