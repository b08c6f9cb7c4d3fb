"""Build the Iceberg REST catalog server of the tests and the local stack (`tools/rest_catalog/org/apache/iceberg/
rest/*.java`: Iceberg's own request handlers over JdbcCatalogs, served by the JDK's HTTP server) into
`rest_catalog/classes` beside the provisioned jars (`.data/rest_catalog`), idempotently, and give its classpath.

Compiled with the JDK's javac against the provisioned jars (`make jars`: the Iceberg runtime and the relocated
Jackson and HttpClient it lacks). The build is keyed by the sources' content (`_BUILT.json`); work happens in a
temporary sibling renamed into place, so an interrupted build never leaves half a set.

    python tools/rest_catalog.py [--force]   # builds, prints the output directory
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from provision_jars import ProvisionError, _java, _run, provisioned_jars

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCES = REPO_ROOT / "tools" / "rest_catalog" / "org" / "apache" / "iceberg" / "rest"
SERVER_CLASS = "org.apache.iceberg.rest.SubstraitRestCatalogServer"
STAMP = "_BUILT.json"


def jars_dir() -> Path:
    """The provisioned jars: `$SUBSTRAIT_SPARK_JARS_DIR`, else `.data/jars` (as the package finds them)."""
    env = os.environ.get("SUBSTRAIT_SPARK_JARS_DIR")
    return Path(env).expanduser() if env else REPO_ROOT / ".data" / "jars"


def _fingerprint(jars: list[str]) -> str:
    digest = hashlib.sha256()
    for path in [*sorted(SOURCES.rglob("*.java")), Path(__file__)]:
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + path.read_bytes())
    for jar in jars:
        digest.update(Path(jar).name.encode())
    return digest.hexdigest()


def build(out_dir: Path | None = None, force: bool = False) -> Path:
    """The output directory (`rest_catalog` beside the jars by default), built when missing or stale."""
    jars = provisioned_jars(jars_dir())
    out_dir = out_dir or jars_dir().parent / "rest_catalog"
    stamp = out_dir / STAMP
    fingerprint = _fingerprint(jars)
    if not force and stamp.is_file() and json.loads(stamp.read_text()).get("fingerprint") == fingerprint:
        return out_dir
    javac = str(Path(_java()).with_name("javac"))
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".rest_catalog-", dir=out_dir.parent))
    try:
        classes = work / "classes"
        sources = [str(p) for p in sorted(SOURCES.rglob("*.java"))]
        _run([javac, "-nowarn", "-d", str(classes), "-cp", ":".join(jars), *sources], "javac (REST catalog server)")
        (work / STAMP).write_text(json.dumps({"fingerprint": fingerprint}))
        shutil.rmtree(out_dir, ignore_errors=True)
        work.rename(out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


def server_classpath(pyspark_jars: Path, out_dir: Path | None = None) -> str:
    """The server's classpath: its classes, the provisioned jars, and Spark's jars (Hadoop, for HadoopFileIO)."""
    built = build(out_dir)
    return ":".join([str(built / "classes"), *provisioned_jars(jars_dir()), str(pyspark_jars / "*")])


if __name__ == "__main__":
    try:
        print(build(force="--force" in sys.argv[1:]))
    except ProvisionError as exc:
        print(f"rest_catalog: {exc}", file=sys.stderr)
        sys.exit(1)
