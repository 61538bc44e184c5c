"""How the gate calls a tool's hooks, with the call's facts when the tool declares them.

A tool without `facts` takes the hooks' short forms (`describe(args)`, `handler(service, args,
ctx)`); one with them gets its facts object last in each. The branch lives here, in the policy
layer that calls the namespace, so the contract in `mcp_tools.core.tooling` stays data.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from mcp_tools.core.tooling import CallContext, Risk, ToolSpec

Spec = ToolSpec[Any, Any, Any, Any]


def target_version(facts: Any) -> str | None:
    """What the call's checks saw of its target (a file's size and time), when its facts say.

    An approval covers it as well as the arguments, so a target changed after the person was
    asked is asked about again instead of being acted on under the old answer.
    """
    version = getattr(facts, "target_version", None)
    return version if isinstance(version, str) else None


def summary(spec: Spec, args: Any, facts: Any) -> str:
    """`describe` for this call."""
    if spec.facts is None:
        return cast(Callable[[Any], str], spec.describe)(args)
    return cast(Callable[[Any, Any], str], spec.describe)(args, facts)


async def gather(spec: Spec, service: Any, args: Any, ctx: CallContext, facts: Any) -> None:
    """`prepare` for this call, when the tool has one."""
    if spec.prepare is None:
        return
    if spec.facts is None:
        await cast(Callable[[Any, Any, CallContext], Awaitable[None]], spec.prepare)(service, args, ctx)
    else:
        await cast(Callable[[Any, Any, CallContext, Any], Awaitable[None]], spec.prepare)(service, args, ctx, facts)


async def risk_for(spec: Spec, service: Any, args: Any, facts: Any) -> Risk | None:
    """`dynamic_risk` for this call, or None when the tool has none."""
    if spec.dynamic_risk is None:
        return None
    if spec.facts is None:
        return await cast(Callable[[Any, Any], Awaitable[Risk]], spec.dynamic_risk)(service, args)
    return await cast(Callable[[Any, Any, Any], Awaitable[Risk]], spec.dynamic_risk)(service, args, facts)


async def check(spec: Spec, service: Any, args: Any, facts: Any) -> None:
    """`precheck` for this call, when the tool has one."""
    if spec.precheck is None:
        return
    if spec.facts is None:
        await cast(Callable[[Any, Any], Awaitable[None]], spec.precheck)(service, args)
    else:
        await cast(Callable[[Any, Any, Any], Awaitable[None]], spec.precheck)(service, args, facts)


async def run(spec: Spec, service: Any, args: Any, ctx: CallContext, facts: Any) -> Any:
    """`handler` for this call."""
    if spec.facts is None:
        return await cast(Callable[[Any, Any, CallContext], Awaitable[Any]], spec.handler)(service, args, ctx)
    return await cast(Callable[[Any, Any, CallContext, Any], Awaitable[Any]], spec.handler)(service, args, ctx, facts)
