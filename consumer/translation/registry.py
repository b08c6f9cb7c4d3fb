"""The plug-in point for extension relations and extension tables, keyed by their protobuf `Any` type URL.

Substrait leaves `ExtensionSingleRel` / `ExtensionMultiRel` / `ExtensionLeafRel` and `ReadRel.ExtensionTable`
to the producer and consumer to agree on: the `detail` field packs a message only they know. A handler
registered here for that message's type URL translates it; without one the consumer refuses the plan with
`UnsupportedFeatureError` (and `validate` reports it). A handler is called as

    fn(consumer, detail: google.protobuf.Any, inputs: list[Relation], path: str) -> Relation

`inputs` are the translated input relations (none for a leaf relation or an extension table), each with its
projection applied; build the output with `Relation(df, names)` using fresh internal column names
(`consumer.names.fresh()`). See docs/extending.md.

Two ways to register: `register_extension_relation(type_url, fn)` for every consumer in the process, or a
`SubstraitConsumer` subclass with its own `extension_relations` dict (which takes precedence).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .relation import Relation

ExtensionHandler = Callable[[Any, Any, list["Relation"], str], "Relation"]

# Process-wide handlers by type URL (`type.googleapis.com/my.pkg.MyRel`).
_HANDLERS: dict[str, ExtensionHandler] = {}


def register_extension_relation(type_url: str, fn: ExtensionHandler) -> ExtensionHandler:
    """Translate extension relations and extension tables whose `detail` has this type URL with `fn`.

    Returns `fn`, so it can be used as a decorator via `functools.partial` or directly. Registering the same
    URL again replaces the handler (a deliberate override, e.g. in tests).
    """
    if not type_url:
        raise ValueError("an extension handler needs a non-empty type URL")
    _HANDLERS[type_url] = fn
    return fn


def unregister_extension_relation(type_url: str) -> None:
    """Forget the process-wide handler for `type_url` (no error if there is none)."""
    _HANDLERS.pop(type_url, None)


def extension_handler(own: Mapping[str, ExtensionHandler], type_url: str) -> ExtensionHandler | None:
    """The handler for `type_url`: the consumer class's own table first, then the process-wide registry."""
    return own.get(type_url) or _HANDLERS.get(type_url)


def registered() -> dict[str, ExtensionHandler]:
    """A copy of the process-wide registry (for reports and tests)."""
    return dict(_HANDLERS)


__all__ = [
    "ExtensionHandler",
    "extension_handler",
    "register_extension_relation",
    "registered",
    "unregister_extension_relation",
]
