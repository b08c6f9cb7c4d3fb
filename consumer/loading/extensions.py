"""The plan's extension declarations: function anchors to names and extension URNs.

URI-era plans reach here with their URIs already read as URNs (legacy.fields): the standard extension files
as `extension:io.substrait:functions_x`, any other URI as written; `extension_stem` takes both. A function a known
producer declares under its own name with no extension (`producers.FUNCTION_ALIASES`) is read as the function it
is: its base name and extension are that function's, its `name` stays as written (for messages).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from substrait.plan_pb2 import Plan

from ..errors import PlanInvalidError
from .producers import FunctionAlias, Quirks


@dataclass(frozen=True)
class FunctionRef:
    """One declared function: `name` as written (`equal:any_any`), its base name and extension file."""

    anchor: int
    name: str
    base: str
    signature: tuple[str, ...]
    extension: str
    # Options the producer's name for the function fixes (`producers.FunctionAlias`): name -> value.
    implied: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, anchor: int, name: str, extension: str) -> FunctionRef:
        base, _, sig = name.partition(":")
        return cls(anchor, name, base.lower(), tuple(s for s in sig.split("_") if s), extension)

    def aliased(self, alias: FunctionAlias) -> FunctionRef:
        """This declaration read as the function a producer's own name stands for."""
        return replace(self, base=alias.base, extension=alias.extension, implied=alias.options)

    def with_implied(self, given: dict[str, list[str]], path: str) -> dict[str, list[str]]:
        """The call's options (name -> the plan's preferences) with those the function's name fixes; a plan that
        states another value for one contradicts itself."""
        out = dict(given)
        for option, value in self.implied:
            stated = given.get(option)
            if stated and value not in (s.upper() for s in stated):
                raise PlanInvalidError(f"{self.name} means {option} {value}, its option says {'|'.join(stated)}", path)
            out[option] = [value]
        return out

    @property
    def extension_stem(self) -> str:
        """`functions_arithmetic` for its URN `extension:io.substrait:functions_arithmetic` or its URI."""
        last = self.extension.rstrip("/").rpartition("/")[2].rpartition(":")[2]
        return last.removesuffix(".yaml")

    @property
    def keys(self) -> tuple[str, ...]:
        """Function-table keys, most specific first: `unsigned_integers/add`, then `add`."""
        return (f"{self.extension_stem}/{self.base}", self.base)


class Extensions:
    """Lookup of function and type anchors declared by a plan."""

    def __init__(self, plan: Plan):
        urns = {u.extension_urn_anchor: u.urn for u in plan.extension_urns}
        aliases = Quirks.of(plan).function_aliases
        self.functions: dict[int, FunctionRef] = {}
        self.types: dict[int, str] = {}
        self.type_variations: dict[int, str] = {}
        self.aliased: list[FunctionRef] = []  # declarations read through the producer's own names
        for i, ext in enumerate(plan.extensions):
            kind = ext.WhichOneof("mapping_type")
            decl = getattr(ext, kind) if kind else None
            if decl is None:
                raise PlanInvalidError("extension declaration with nothing set", f"extensions[{i}]")
            where = urns.get(decl.extension_urn_reference, "")
            if kind == "extension_function":
                ref = FunctionRef.parse(decl.function_anchor, decl.name, where)
                alias = aliases.get(ref.base) if not where else None
                self.functions[decl.function_anchor] = ref.aliased(alias) if alias is not None else ref
                if alias is not None:
                    self.aliased.append(self.functions[decl.function_anchor])
            elif kind == "extension_type":
                self.types[decl.type_anchor] = decl.name
            else:
                self.type_variations[decl.type_variation_anchor] = decl.name

    def notes(self) -> list[str]:
        """For the run report: the functions the plan names under its producer's own names, as they were read."""
        read = dict.fromkeys(
            f"{r.name} as {r.extension_stem}/{r.base}" + "".join(f" ({o} {v})" for o, v in r.implied)
            for r in self.aliased
        )
        return [f"functions under the producer's own names read as: {', '.join(read)}"] if read else []

    def function(self, anchor: int, path: str) -> FunctionRef:
        try:
            return self.functions[anchor]
        except KeyError:
            raise PlanInvalidError(f"function reference {anchor} names no declared extension function", path) from None
