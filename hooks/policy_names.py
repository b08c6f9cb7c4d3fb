"""The catalogs' side of a policy check (`consumer/analysis/policy.TableNames`): a NamedTable's
`catalog.namespace` and a view's stored definition, asked of pyiceberg — no Spark session, so a refused plan
never starts one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from substrait_spark.consumer.errors import ResolutionError

if TYPE_CHECKING:
    from substrait.plan_pb2 import Plan
    from substrait_spark.hooks.iceberg import Catalogs


class CatalogNames:
    """Names as the run's Iceberg catalogs resolve them: a leading configured catalog, else the default one; a
    bare table name is looked up in every namespace (as a read finds it)."""

    def __init__(self, catalogs: Catalogs):
        self.catalogs = catalogs

    def namespace(self, names: Sequence[str]) -> str | None:
        catalog_name, parts = self.catalogs.split(names)
        if len(parts) > 1:
            return ".".join((catalog_name, *parts[:-1]))
        from substrait_spark.hooks.iceberg import find_table

        try:
            ident = find_table(self.catalogs.load(catalog_name), catalog_name, parts)
        except ResolutionError:
            return None  # not there (a new table needs a namespace anyway) or ambiguous
        return ".".join((catalog_name, *ident[:-1]))

    def view(self, names: Sequence[str]) -> Plan | None:
        from substrait_spark.consumer.loading.loader import parse_plan_bytes
        from substrait_spark.hooks.iceberg import stored_view

        catalog_name, parts = self.catalogs.split(names)
        view = stored_view(self.catalogs.load(catalog_name), catalog_name, parts)
        if view is None or view.definition is None:
            return None
        return parse_plan_bytes(view.definition.encode(), uri=f"view {view.identity}").plan
