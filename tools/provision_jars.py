"""Provision the jars of the embedded Iceberg stack into `.data/jars/` (offline afterwards).

Spark reaches Iceberg and the shared catalog database through five jars:

- the Iceberg Spark runtime `iceberg-spark-runtime-3.5_2.12-*.jar`, taken from the PyPI package
  `snowpark-connect-deps-iceberg` (PyPI is reachable here, Maven Central is not);
- `iceberg-shaded-jackson.jar`: that runtime jar references Jackson relocated to
  `org.apache.iceberg.shaded.com.fasterxml.jackson` but does not ship it, so we relocate pyspark's own
  Jackson 2.15.2 jars with Debian's jarjar (`libjarjar-java`);
- `iceberg-shaded-httpclient5.jar`: the same for Apache HttpClient 5 (relocated to
  `org.apache.iceberg.shaded.org.apache.hc`), which Iceberg's REST catalog client needs: Debian's HttpClient 5.2
  (`libhttpclient5-java`, `libhttpcore5-java`) relocated with jarjar, plus an empty stand-in for the one 5.4 interface
  the client links against (`TlsSocketStrategy`, used only by a custom TLS configurer; tools/rest_catalog/);
- the SQLite JDBC driver (Debian's `libxerial-sqlite-jdbc-java`; its native part, `libsqlitejdbc.so`, stays in
  `/usr/lib/<triplet>/jni`, which is on Debian's default `java.library.path`);
- the PostgreSQL JDBC driver (Debian's `libpostgresql-jdbc-java`), for the production-like catalog.

Missing Debian packages are installed with apt-get (as root). Idempotent: a finished directory holds a
`_PROVISIONED.json` stamp listing the jars; when it matches, nothing is done. Work happens in a temporary sibling
directory renamed into place at the end, so an interrupted run never leaves half a set.

    python tools/provision_jars.py [--output-dir .data/jars] [--force]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from provision_data import STAMP

STAMP_FORMAT = 2  # 2: the relocated HttpClient (Iceberg's REST catalog client) joined the set
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / ".data" / "jars"

# Pinned: the runtime jar inside decides the Iceberg version (1.0.3 carries Iceberg 1.10.2).
ICEBERG_PACKAGE = "snowpark-connect-deps-iceberg==1.0.3"
RUNTIME_PATTERN = re.compile(r"iceberg-spark-runtime-3\.5_2\.12-(?P<version>[0-9][^/]*)\.jar$")
SHADED_JACKSON = "iceberg-shaded-jackson.jar"
JACKSON_RULE = "rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1\n"
# What the runtime jar references under the relocated prefix (annotation, core, databind, datatype.jsr310).
JACKSON_ARTIFACTS = ("annotations", "core", "databind", "datatype-jsr310")
JACKSON_PROBES = (
    "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper.class",
    "org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactory.class",
    "org/apache/iceberg/shaded/com/fasterxml/jackson/annotation/JsonProperty.class",
    "org/apache/iceberg/shaded/com/fasterxml/jackson/datatype/jsr310/JavaTimeModule.class",
)

SHADED_HTTPCLIENT = "iceberg-shaded-httpclient5.jar"
HTTPCLIENT_JARS = (
    ("libhttpclient5-java", Path("/usr/share/java/httpclient5.jar")),
    ("libhttpcore5-java", Path("/usr/share/java/httpcore5.jar")),
    ("libhttpcore5-java", Path("/usr/share/java/httpcore5-h2.jar")),
)
HTTPCLIENT_RULE = "rule org.apache.hc.** org.apache.iceberg.shaded.org.apache.hc.@1\n"
HTTPCLIENT_STANDINS = REPO_ROOT / "tools" / "rest_catalog" / "org" / "apache" / "iceberg" / "shaded"

JARJAR = ("libjarjar-java", Path("/usr/share/java/jarjar.jar"))
SQLITE_JDBC = ("libxerial-sqlite-jdbc-java", Path("/usr/share/java/sqlite-jdbc.jar"))
POSTGRES_JDBC = ("libpostgresql-jdbc-java", Path("/usr/share/java/postgresql.jar"))
# The production-like catalog store the tests start on 127.0.0.1 (not a jar, but the same Debian step).
POSTGRES_SERVER = ("postgresql", Path("/usr/lib/postgresql"))


class ProvisionError(RuntimeError):
    """A step failed; the message says which and what to do."""


# ---- reading the result (also used by tests; the package reads the same stamp in hooks/iceberg_spark.py) ----


def provisioned_jars(jars_dir: Path | str = DEFAULT_OUTPUT) -> list[str]:
    """Absolute paths of the provisioned jars, in classpath order; raises when not provisioned."""
    stamp = Path(jars_dir) / STAMP
    if not stamp.is_file():
        raise ProvisionError(f"no jars provisioned in {jars_dir}: run `make jars` (python tools/provision_jars.py)")
    jars = [str(Path(jars_dir, name).resolve()) for name in json.loads(stamp.read_text())["jars"]]
    missing = [j for j in jars if not Path(j).is_file()]
    if missing:
        raise ProvisionError(f"provisioned jars missing: {missing}; run tools/provision_jars.py --force")
    return jars


# ---- steps -----------------------------------------------------------------------------------------------


def _run(cmd: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
        raise ProvisionError(f"{what} failed (exit {proc.returncode}): {' | '.join(detail)}")
    return proc


def _dpkg_installed(package: str) -> bool:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == "install ok installed"


def ensure_debian_packages(wanted: list[tuple[str, Path]]) -> None:
    """apt-get install the packages whose files are missing (apt-get update once if the first try fails)."""
    missing = [pkg for pkg, path in wanted if not (path.exists() and _dpkg_installed(pkg))]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise ProvisionError(f"missing Debian packages {missing} and no apt-get on this machine")
    if os.geteuid() != 0:
        raise ProvisionError(f"missing Debian packages; as root run: apt-get install -y {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    print(f"jars: apt-get install {' '.join(missing)} ...", flush=True)
    if subprocess.run(install, capture_output=True, text=True, env=env, check=False).returncode != 0:
        _run(["apt-get", "update", "-q"], "apt-get update", env=env)
        _run(install, f"apt-get install {' '.join(missing)}", env=env)
    still = [str(path) for _, path in wanted if not path.exists()]
    if still:
        raise ProvisionError(f"Debian packages installed but files still missing: {still}")


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    found = shutil.which("java")
    if not found:
        raise ProvisionError("java not found (JAVA_HOME or PATH); Java 17 is needed: see tools/check_java.sh")
    return found


def fetch_runtime_jar(work: Path, dest: Path, package: str) -> str:
    """pip download the wheel (no deps) and copy its Scala 2.12 runtime jar to dest; returns the Iceberg version."""
    _run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(work), package],
        f"pip download {package}",
    )
    wheels = sorted(work.glob("*.whl"))
    if len(wheels) != 1:
        raise ProvisionError(f"pip download {package} gave {len(wheels)} wheels in {work}, expected one")
    with zipfile.ZipFile(wheels[0]) as wheel:
        hits = [(n, m) for n in wheel.namelist() if (m := RUNTIME_PATTERN.search(n))]
        if len(hits) != 1:
            raise ProvisionError(f"{wheels[0].name} holds {len(hits)} Spark 3.5/Scala 2.12 runtime jars, expected one")
        name, match = hits[0]
        target = dest / Path(name).name
        with wheel.open(name) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    return match["version"]


def pyspark_jars_dir() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ProvisionError(f"pyspark is not importable from {sys.executable}; run this with the venv's python")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not jars.is_dir():
        raise ProvisionError(f"pyspark has no jars folder at {jars}")
    return jars


def relocate(jars: list[Path], prefix: str, rule: str, work: Path, target: Path) -> Path:
    """`target`: the entries of `jars` under `prefix` relocated by jarjar's `rule`.

    jarjar 1.4 rejects multi-release jars (a class under META-INF/versions/N relocates onto its base class), so
    only the base entries under `prefix` are merged into one input jar first."""
    work.mkdir(parents=True, exist_ok=True)
    merged = work / "merged.jar"
    with zipfile.ZipFile(merged, "w", zipfile.ZIP_DEFLATED) as out:
        for jar in jars:
            with zipfile.ZipFile(jar) as src:
                for info in src.infolist():
                    if info.filename.startswith(prefix) and not info.is_dir():
                        out.writestr(info.filename, src.read(info))
    rules = work / "rules.txt"
    rules.write_text(rule)
    _run([_java(), "-jar", str(JARJAR[1]), "process", str(rules), str(merged), str(target)], "jarjar")
    return target


def build_shaded_jackson(work: Path, dest: Path) -> str:
    """Relocate pyspark's Jackson jars into Iceberg's shaded package with jarjar; returns the Jackson version."""
    jars_dir = pyspark_jars_dir()
    inputs = []
    for artifact in JACKSON_ARTIFACTS:
        found = sorted(jars_dir.glob(f"jackson-{artifact}-2.*.jar"))
        if len(found) != 1:
            raise ProvisionError(f"expected one jackson-{artifact}-2.*.jar in {jars_dir}, found {len(found)}")
        inputs.append(found[0])
    version = re.search(r"-(2\.[0-9.]+)\.jar$", inputs[0].name)[1]

    target = relocate(inputs, "com/fasterxml/jackson/", JACKSON_RULE, work / "jackson", dest / SHADED_JACKSON)
    with zipfile.ZipFile(target) as shaded:
        names = set(shaded.namelist())
    absent = [p for p in JACKSON_PROBES if p not in names]
    if absent or any(n.startswith("com/fasterxml/") for n in names):
        raise ProvisionError(f"jarjar output {target} is not relocated as expected (missing {absent})")
    return version


def build_shaded_httpclient(work: Path, dest: Path) -> str:
    """Relocate Debian's HttpClient 5 jars into Iceberg's shaded package with jarjar, with the stand-in interface."""
    jars = [jar for _, jar in HTTPCLIENT_JARS]
    target = relocate(jars, "org/apache/hc/", HTTPCLIENT_RULE, work / "httpclient", dest / SHADED_HTTPCLIENT)
    standins = work / "standins"
    javac = str(Path(_java()).with_name("javac"))
    _run([javac, "-nowarn", "-d", str(standins), *map(str, sorted(HTTPCLIENT_STANDINS.rglob("*.java")))], "javac")
    with zipfile.ZipFile(target, "a") as shaded:
        for cls in sorted(standins.rglob("*.class")):
            shaded.write(cls, str(cls.relative_to(standins)))
        names = set(shaded.namelist())
    probe = "org/apache/iceberg/shaded/org/apache/hc/client5/http/impl/classic/HttpClients.class"
    if probe not in names or any(n.startswith("org/apache/hc/") for n in names):
        raise ProvisionError(f"jarjar output {target} is not relocated as expected")
    return SHADED_HTTPCLIENT


def copy_debian_jar(path: Path, dest: Path) -> str:
    """Copy the versioned file behind Debian's unversioned symlink; returns the file name."""
    real = path.resolve()
    shutil.copyfile(real, dest / real.name)
    return real.name


# ---- main ------------------------------------------------------------------------------------------------


def is_complete(out_dir: Path, wanted: dict) -> bool:
    from provision_data import stamp_of

    have = stamp_of(out_dir, wanted)
    return have is not None and all((out_dir / name).is_file() for name in have.get("jars", ()))


def provision(out_dir: Path, force: bool = False, package: str = ICEBERG_PACKAGE) -> dict:
    """Make `out_dir` hold the five jars and the stamp; returns the stamp."""
    import pyspark

    wanted = {"format": STAMP_FORMAT, "iceberg_package": package, "pyspark": pyspark.__version__}
    if not force and is_complete(out_dir, wanted):
        (out_dir / STAMP).touch()  # newer than the venv stamp: make sees it up to date
        print(f"jars: up to date in {out_dir}")
        return json.loads((out_dir / STAMP).read_text())

    started = time.monotonic()
    ensure_debian_packages([JARJAR, *HTTPCLIENT_JARS, SQLITE_JDBC, POSTGRES_JDBC, POSTGRES_SERVER])
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    print(f"jars: provisioning into {out_dir} ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="provision-jars-") as work_name:
        work = Path(work_name)
        iceberg_version = fetch_runtime_jar(work, tmp, package)
        runtime = next(tmp.glob("iceberg-spark-runtime-*.jar")).name
        jackson_version = build_shaded_jackson(work, tmp)
        httpclient = build_shaded_httpclient(work, tmp)
    sqlite = copy_debian_jar(SQLITE_JDBC[1], tmp)
    postgres = copy_debian_jar(POSTGRES_JDBC[1], tmp)

    stamp = dict(
        wanted,
        iceberg_version=iceberg_version,
        jackson_version=jackson_version,
        jars=[runtime, SHADED_JACKSON, httpclient, sqlite, postgres],
        seconds=round(time.monotonic() - started, 1),
    )
    (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    print(f"jars: Iceberg {iceberg_version}, Jackson {jackson_version} relocated; done in {stamp['seconds']} s")
    return stamp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", "-o", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--package", default=ICEBERG_PACKAGE, help=f"PyPI requirement (default {ICEBERG_PACKAGE})")
    parser.add_argument("--force", action="store_true", help="provision again even when up to date")
    parser.add_argument("--list", action="store_true", help="print the provisioned jars as JSON and exit")
    args = parser.parse_args(argv)
    try:
        if args.list:
            print(json.dumps(provisioned_jars(args.output_dir)))
        else:
            provision(args.output_dir, args.force, args.package)
    except ProvisionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
