from evals.checks import ASSERTIONS
from evals.fixtures.catalog import fixtures_for
from evals.record.turn import RecordedTurn


def check(kind, answer="", *, calls=None, catalog="demo", attached=None, evidence=None, **args):
    spec = ASSERTIONS[kind]
    turn = RecordedTurn(answer, calls or [], attached or [], [], evidence or {})
    return spec.check(turn, spec.args.model_validate(args), fixtures_for(catalog))


def call(name, arguments=None, result=None, kind="read"):
    return {"name": name, "arguments": arguments or {}, "result": result or {}, "kind": kind}
