"""Textual's callbacks without an ``inspect.signature`` call each.

Textual wraps every ``call_later``, ``call_next`` and ``call_after_refresh`` callback in a
new ``functools.partial``, and counts the parameters of the bound method inside it with
``inspect.signature`` on every call: its cache is kept on the partial, which is new each
time. A streaming reply schedules a few of those per frame (Textual's own screen does after
each refresh), and the signatures were ~4 % of the app's CPU while a reply streams
(docs/benchmarks.md, "Streaming CPU: fewer frames and calls"). The count of a bound method
depends only on its function, so it is kept on the function.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

#: Where the count of a bound method's parameters is kept on its function (Textual keeps
#: its own ``_param_count`` there too, with another meaning for partials).
_ATTRIBUTE = "_picode_bound_parameters"


def counting_bound_methods_once(
    count: Callable[[Callable[..., Any]], int],
) -> Callable[[Callable[..., Any]], int]:
    """``count`` (Textual's ``_count_parameters``) remembering the result for bound
    methods; anything else is counted by ``count`` each time, as before."""

    def count_parameters(func: Callable[..., Any]) -> int:
        if not isinstance(func, MethodType):
            return count(func)
        function = func.__func__
        known = getattr(function, _ATTRIBUTE, None)
        if isinstance(known, int):
            return known
        result = count(func)
        try:
            setattr(function, _ATTRIBUTE, result)
        except (AttributeError, TypeError):
            pass  # a builtin's method: counted again next time
        return result

    return count_parameters


def count_bound_methods_once() -> None:
    """Install ``counting_bound_methods_once`` in Textual (once)."""
    from textual import _callback

    current = getattr(_callback, "_count_parameters", None)
    if current is None:
        return  # another Textual: its callbacks are counted its own way
    if not hasattr(current, "__wrapped__"):
        patched = counting_bound_methods_once(current)
        patched.__wrapped__ = current  # type: ignore[attr-defined]
        # A private function of Textual's (8.x): the module's own callers look it up there.
        setattr(_callback, "_count_parameters", patched)  # noqa: B010
