"""The agent under test, as a version: what it is told per context (composed by the app's own
code), its fingerprint, and a frozen version (a comparison point's) run again by today's
harness: the frozen system prompt and tool schemas are sent, today's tools (stubbed) run."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from app.capabilities import REGISTRY, Tool
from app.chat.compose import ComposedChat
from app.settings import Settings
from evals.execute.compose import ComposedCase, compose_case
from evals.execute.env import EvalEnv
from evals.execute.stubs import stub_tools
from evals.fixtures.lab_catalog import CATALOGS
from evals.load.cases import Case
from evals.load.items import EvalItem
from evals.record.fingerprint import AgentInfo, AgentSettings, FrozenContext, digest
from evals.settings import PROJECT_ROOT


class FrozenAgentError(ValueError):
    """A frozen agent that today's code can no longer run (a tool it was given is gone)."""


class PlanMismatch(ValueError):
    """A frozen agent that lacks a context the plan uses: `missing`, each such context's key
    with the ids of the items that use it."""

    def __init__(self, label: str, missing: dict[str, list[str]]) -> None:
        super().__init__(f"the frozen agent of {label} has no context for "
                         + "; ".join(f"{key} (used by {named(ids)})"
                                     for key, ids in missing.items()))
        self.label = label
        self.missing = missing


def named(ids: Sequence[str], most: int = 5) -> str:
    """A few ids for a message, and how many more."""
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    return ", ".join(ids[:most]) + more


def agent_settings(settings: Settings) -> AgentSettings:
    return AgentSettings(max_tool_steps=settings.max_tool_steps,
                         temperature=settings.model_temperature)


def as_recorded(settings: Settings, agent: AgentSettings) -> Settings:
    """Today's settings with an agent's own as it recorded them (agent_settings undone): its
    temperature (unset: the provider's default) and its tool rounds per turn."""
    return settings.model_copy(update={"model_temperature": agent.temperature,
                                       "max_tool_steps": agent.max_tool_steps})


def agent_info(model: str, settings: AgentSettings, contexts: dict[str, FrozenContext],
               git: tuple[str | None, bool] | None = None, *,
               model_ref: str | None = None,
               fragments: Mapping[str, Mapping[str, str]] | None = None) -> AgentInfo:
    """An agent version; `fragments`, each context's capability fragments by name (from
    compose_contexts), are kept as line counts to trace a changed prompt line to them."""
    commit, dirty = git if git is not None else git_state()
    # Unset settings are left out, so an agent recorded before a setting was kept hashes as
    # it did.
    material = {"model": model, "settings": settings.model_dump(exclude_none=True),
                "contexts": {k: v.model_dump() for k, v in sorted(contexts.items())},
                "commit": commit, "dirty": dirty}
    return AgentInfo(fingerprint=digest(material), model=model, settings=settings,
                     contexts=contexts, git_commit=commit, git_dirty=dirty, model_ref=model_ref,
                     fragments={key: {name: len(text.splitlines()) for name, text in f.items()
                                      if text}
                                for key, f in (fragments or {}).items()})


def git_state(root: Path = PROJECT_ROOT) -> tuple[str | None, bool]:
    """The checkout's commit and whether tracked files differ from it (None outside git)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=root, capture_output=True, text=True, timeout=5,
                                check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, False
    return commit or None, bool(status.strip())


async def compose_contexts(env: EvalEnv, items: Sequence[EvalItem],
                           fragments: dict[str, dict[str, str]] | None = None
                           ) -> dict[str, FrozenContext]:
    """What the assistant is told for each audience and page these items use (a scenario's
    context is composed as a turn on its page would be). `fragments`, if given, gets each
    context's capability fragments by name (what a changed prompt is traced back to)."""
    out: dict[str, FrozenContext] = {}
    for item in items:
        key = item.context.key
        if key not in out:
            case = item if isinstance(item, Case) else Case(
                id="context", prompt=item.prompt, context=item.context, checks=item.checks)
            composed = (await compose_case(env, case)).composed
            out[key] = FrozenContext(system_prompt=composed.system_prompt,
                                     tools=composed.tool_schemas())
            if fragments is not None:
                fragments[key] = dict(composed.fragments)
    return out


async def all_contexts(env: EvalEnv, items: Sequence[EvalItem],
                       fragments: dict[str, dict[str, str]] | None = None
                       ) -> dict[str, FrozenContext]:
    """Every context of a plan, catalogue by catalogue (seeding each in turn)."""
    contexts: dict[str, FrozenContext] = {}
    for catalog in CATALOGS:
        these = [i for i in items if i.context.catalog == catalog]
        if these:
            await env.use_catalog(catalog)
            contexts.update(await compose_contexts(env, these, fragments))
    return contexts


def tell_as_frozen(composed: ComposedChat, frozen: dict[str, FrozenContext], key: str) -> None:
    """Tell the model what the frozen version was told in this context: its system prompt and
    tool schemas. Each tool runs as today's tool of its name runs in this composition (a
    case's stubs, a conversation's real tools), or as registered if today's context lacks it."""
    version = frozen.get(key)
    if version is None:
        raise FrozenAgentError(f"the frozen agent has no context {key!r}")
    current = {t.name: t for t in composed.tools}
    tools = []
    for schema in version.tools:
        fn = schema.get("function")
        fn = fn if isinstance(fn, dict) else {}
        name = str(fn.get("name", ""))
        tool = current.get(name) or registered(name)
        params = fn.get("parameters")
        tools.append(replace(tool, description=str(fn.get("description", "")),
                             parameters=params if isinstance(params, dict) else None))
    composed.system_prompt = version.system_prompt
    composed.tools = tools


def apply_frozen(composed: ComposedCase, frozen: dict[str, FrozenContext], key: str) -> None:
    """A case's turn as the frozen version was told it; the tools still run today's code,
    stubbed as in any eval (a tool today's context lacks comes unstubbed from the registry)."""
    tell_as_frozen(composed.composed, frozen, key)
    composed.composed.tools = stub_tools(composed.composed.tools)


def registered(name: str) -> Tool:
    tool = REGISTRY.all_tools().get(name)
    if tool is None:
        raise FrozenAgentError(f"the frozen agent's tool {name!r} no longer exists")
    return tool


def check_frozen(frozen: dict[str, FrozenContext]) -> None:
    """Refuse a frozen agent whose tools are no longer registered, before any call."""
    for key, version in frozen.items():
        for schema in version.tools:
            fn = schema.get("function")
            try:
                registered(str(fn.get("name", "")) if isinstance(fn, dict) else "")
            except FrozenAgentError as exc:
                raise FrozenAgentError(f"{exc} (context {key!r})") from exc
