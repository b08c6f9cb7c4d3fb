"""One Iceberg catalog seen by both Spark (Iceberg's JDBC catalog) and pyiceberg (`SqlCatalog`).

Both sides keep their table pointers in the same database (a SQLite file in the embedded stack, PostgreSQL in
production-like setups), in the table `iceberg_tables`, keyed by `catalog_name`: the catalog *name* must be the
same on both sides, or each sees only its own tables. This module builds the matching settings for each side
from one description (name, database URI, warehouse), and finds the jars Spark needs offline
(`tools/provision_jars.py` puts them in `.data/jars`).

No Airflow import, no Spark session and no pyiceberg import at import time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

if TYPE_CHECKING:  # pragma: no cover
    from pyiceberg.catalog.sql import SqlCatalog
    from pyspark.sql import SparkSession

JARS_DIR_ENV = "SUBSTRAIT_SPARK_JARS_DIR"
JARS_STAMP = "_PROVISIONED.json"  # written by tools/provision_jars.py: {"jars": [file names in classpath order]}
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SPARK_CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
# V1 adds `iceberg_type` (tables and views) to `iceberg_tables`; pyiceberg >= 0.12 reads and writes it too.
JDBC_SCHEMA_VERSION = "V1"

# Spark's CTAS (and atomic replace) keeps the query's nullability instead of making every column optional: a
# created table's REQUIRED columns are the plan's (the write makes the input's nullability the table_schema's).
KEEP_QUERY_NULLABILITY = {"use-nullable-query-schema": "false"}

_CATALOG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class IcebergSetupError(RuntimeError):
    """The Iceberg stack is not set up (jars not provisioned) or a catalog description is invalid."""


# ---- jars ------------------------------------------------------------------------------------------------


def default_jars_dir() -> Path:
    """`$SUBSTRAIT_SPARK_JARS_DIR`, else `<repo>/.data/jars` for a source checkout (editable install).

    The fallback is relative to this file (`<repo>/hooks/iceberg_spark.py`), which only holds in a checkout; an
    installed package lives in site-packages and must be given the directory (argument or environment variable).
    """
    env = os.environ.get(JARS_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent.parent / ".data" / "jars"


def iceberg_jars(jars_dir: str | Path | None = None) -> list[str]:
    """Absolute paths of the provisioned jars (Iceberg runtime, relocated Jackson, SQLite and PostgreSQL JDBC)."""
    where = Path(jars_dir) if jars_dir is not None else default_jars_dir()
    stamp = where / JARS_STAMP
    if not stamp.is_file():
        raise IcebergSetupError(
            f"Iceberg jars not provisioned in {where}: run `make jars` (python tools/provision_jars.py) "
            f"or set {JARS_DIR_ENV}; on a cluster give spark.jars.packages instead"
        )
    try:
        names = json.loads(stamp.read_text())["jars"]
    except (ValueError, KeyError, TypeError) as exc:
        raise IcebergSetupError(f"unreadable jar stamp {stamp}: {exc}") from exc
    jars = [str((where / name).resolve()) for name in names]
    missing = [j for j in jars if not Path(j).is_file()]
    if missing:
        raise IcebergSetupError(f"provisioned jars missing: {missing}; run tools/provision_jars.py --force")
    return jars


def spark_session_conf(jars_dir: str | Path | None = None) -> dict[str, str]:
    """Static settings a session needs from its start: the jars on the classpath and Iceberg's SQL extensions.

    With these, catalogs can be added to the running session later (`register_catalog`): Spark loads catalog
    plugins lazily by name.
    """
    return {"spark.jars": ",".join(iceberg_jars(jars_dir)), "spark.sql.extensions": ICEBERG_EXTENSIONS}


# ---- catalog database and warehouse ----------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogDatabase:
    """Where the catalog's pointer table lives: a SQLite file or a PostgreSQL database."""

    kind: str  # "sqlite" | "postgresql"
    path: str = ""  # sqlite: absolute file path
    host: str = ""
    port: int | None = None
    database: str = ""
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, uri: str | Path) -> CatalogDatabase:
        """Accepts a file path, `sqlite:////abs.db`, `jdbc:sqlite:/abs.db`, `postgresql[+driver]://u:p@h:port/db`
        and `jdbc:postgresql://h:port/db?user=u&password=p`."""
        text = str(uri)
        if text.startswith("jdbc:"):
            text = text[len("jdbc:") :]
        if text.startswith("sqlite:"):
            rest = text[len("sqlite:") :]
            path = rest[2:] if rest.startswith("//") else rest  # sqlite:////abs (SQLAlchemy) or sqlite:/abs (JDBC)
            if not path or path == ":memory:":
                raise IcebergSetupError(f"a shared catalog needs a SQLite file, not {uri!r}")
            return cls("sqlite", path=str(Path(path).expanduser().resolve()))
        if "://" not in text:
            return cls("sqlite", path=str(Path(text).expanduser().resolve()))
        parts = urlsplit(text)
        if parts.scheme.split("+")[0] not in ("postgresql", "postgres"):
            raise IcebergSetupError(f"unsupported catalog database {uri!r}: use a SQLite file or postgresql://")
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        return cls(
            "postgresql",
            host=parts.hostname or "localhost",
            port=parts.port,
            database=parts.path.lstrip("/"),
            user=unquote(parts.username) if parts.username else query.get("user"),
            password=unquote(parts.password) if parts.password else query.get("password"),
        )

    def with_credentials(self, user: str | None, password: str | None) -> CatalogDatabase:
        if user is None and password is None:
            return self
        return CatalogDatabase(
            self.kind, self.path, self.host, self.port, self.database, user or self.user, password or self.password
        )

    @property
    def _netloc(self) -> str:
        return f"{self.host}:{self.port}" if self.port else self.host

    def jdbc_url(self) -> str:
        """Credentials are not in the URL: Spark gets them as `jdbc.user`/`jdbc.password` (kept out of logs)."""
        if self.kind == "sqlite":
            return f"jdbc:sqlite:{self.path}"
        return f"jdbc:postgresql://{self._netloc}/{self.database}"

    def sqlalchemy_url(self) -> str:
        if self.kind == "sqlite":
            return f"sqlite:///{self.path}"  # path is absolute: sqlite:////abs/file.db
        auth = ""
        if self.user:
            auth = quote(self.user, safe="") + (f":{quote(self.password, safe='')}" if self.password else "") + "@"
        return f"postgresql+psycopg2://{auth}{self._netloc}/{self.database}"


def warehouse_uri(warehouse: str | Path) -> str:
    """A local path becomes `file:///abs/path`; URIs (`file:`, `s3://`, ...) are kept as given."""
    text = str(warehouse)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text):
        return text.rstrip("/")
    return Path(text).expanduser().resolve().as_uri()


def _check_name(name: str) -> str:
    if not _CATALOG_NAME.match(name):
        raise IcebergSetupError(f"catalog name {name!r}: use letters, digits and _ (the same name on both sides)")
    return name


# ---- both sides ------------------------------------------------------------------------------------------


def spark_catalog_conf(
    name: str,
    *,
    uri: str | Path,
    warehouse: str | Path,
    jdbc_user: str | None = None,
    jdbc_password: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Spark settings for an Iceberg JDBC catalog called `name` (plus the session-wide SQL extensions).

    `extra` adds catalog properties (`{"io-impl": ...}` becomes `spark.sql.catalog.<name>.io-impl`); a key that
    already starts with `spark.` is taken as is. The table cache is off by default: another writer (pyiceberg)
    commits to the same tables, and a cached table would hide its snapshots from Spark for up to 30 s. A CTAS keeps
    the query's nullability (`KEEP_QUERY_NULLABILITY`).
    """
    db = CatalogDatabase.parse(uri).with_credentials(jdbc_user, jdbc_password)
    prefix = f"spark.sql.catalog.{_check_name(name)}"
    conf = {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: SPARK_CATALOG_CLASS,
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": db.jdbc_url(),
        f"{prefix}.warehouse": warehouse_uri(warehouse),
        f"{prefix}.jdbc.schema-version": JDBC_SCHEMA_VERSION,
        f"{prefix}.cache-enabled": "false",
        **{f"{prefix}.{k}": v for k, v in KEEP_QUERY_NULLABILITY.items()},
    }
    if db.kind == "sqlite":
        # Iceberg's JdbcCatalog leaves the ResultSet of its table-existence probe (DatabaseMetaData.getTables)
        # open when the tables exist; on SQLite that pooled connection then holds a read lock for the life of the
        # session: other writers (pyiceberg) fail with "database is locked", or, in WAL mode, Spark keeps reading
        # an old snapshot. Skipping the probe avoids it, so the catalog tables must exist first (register_catalog
        # and pyiceberg_catalog create them).
        conf[f"{prefix}.jdbc.init-catalog-tables"] = "false"
    if db.user:
        conf[f"{prefix}.jdbc.user"] = db.user
    if db.password:
        conf[f"{prefix}.jdbc.password"] = db.password
    for key, value in (extra or {}).items():
        conf[key if key.startswith("spark.") else f"{prefix}.{key}"] = str(value)
    return conf


def register_catalog(spark: SparkSession, name: str, **kwargs: Any) -> dict[str, str]:
    """Add (or redefine) the catalog on a running session; its jars must already be on the classpath.

    Creates the catalog tables of a SQLite catalog first (see `spark_catalog_conf`). Only the
    `spark.sql.catalog.<name>*` keys are set (the extensions are static: they must be given at start).
    Redefining a catalog that was already used in this session has no effect until the session is new.
    """
    conf = spark_catalog_conf(name, **kwargs)
    if CatalogDatabase.parse(kwargs["uri"]).kind == "sqlite":
        ensure_catalog_tables(name, **kwargs)
    for key, value in conf.items():
        if key.startswith("spark.sql.catalog."):
            spark.conf.set(key, value)
    return conf


def pyiceberg_catalog_properties(
    name: str,
    *,
    uri: str | Path,
    warehouse: str | Path,
    jdbc_user: str | None = None,
    jdbc_password: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """pyiceberg `SqlCatalog` properties for the same catalog (`load_catalog(name, **props)`).

    `name` is not a property: pass it as the catalog's name. PostgreSQL needs psycopg2 (`pyiceberg[sql-postgres]`).
    """
    _check_name(name)
    db = CatalogDatabase.parse(uri).with_credentials(jdbc_user, jdbc_password)
    props = {
        "type": "sql",
        "uri": db.sqlalchemy_url(),
        "warehouse": warehouse_uri(warehouse),
        "schema_version": JDBC_SCHEMA_VERSION.lower(),
    }
    props.update({k: str(v) for k, v in (extra or {}).items()})
    return props


def pyiceberg_catalog(name: str, **kwargs: Any) -> SqlCatalog:
    """The pyiceberg side of the catalog, opened (creates the catalog tables when absent)."""
    from pyiceberg.catalog.sql import SqlCatalog

    props = pyiceberg_catalog_properties(name, **kwargs)
    props.pop("type")
    return SqlCatalog(name, **props)


def ensure_catalog_tables(name: str, **kwargs: Any) -> None:
    """Create the catalog tables (schema V1) when absent, as pyiceberg does; idempotent."""
    kwargs = {k: v for k, v in kwargs.items() if k != "extra"}
    pyiceberg_catalog(name, **kwargs).engine.dispose()
