"""What the command tests share: the fake model's answer (a test may change it), the cases
they select, a capability fragment changed for a test, and a store down at a run's end."""

from dataclasses import replace

ANSWER = {"text": "We don't have a Glowforge or a CNC router here."}
SELECTION = ["--cases", "no-glowforge,no-cnc-router"]


def store_down_at_the_end(monkeypatch):
    """The run store answers until a run's end, then is down (StoreUnavailable)."""
    from evals.record.store import RunStore, StoreUnavailable

    real = RunStore.finish_run

    async def finish_run(self, record):
        if record.status == "running":  # a resume's start
            return await real(self, record)
        raise StoreUnavailable("the run store (database x on y) is down (no answer): 2"
                               " finished case(s) are not in it")

    monkeypatch.setattr(RunStore, "finish_run", finish_run)


def change_fragment(monkeypatch, name="lab_identity", text="Be brief."):
    """Today's agent is told `text` after a capability's fragment (a prompt change)."""
    from app.capabilities import REGISTRY

    cap = REGISTRY.capabilities[name]
    monkeypatch.setitem(REGISTRY.capabilities, name, replace(
        cap, prompt=lambda ctx: cap.prompt(ctx) + "\n" + text))
