"""mypy on the engine and the public extension surface, under the import names users see.

The source folders are not laid out as the package (`plugin/` is `substrait_spark`, `consumer/` is
`substrait_spark.consumer`, see setup.cfg's package_dir), and the editable install maps them with an import hook
mypy cannot follow. So this builds a tree of symbolic links shaped like the package (`.data/typecheck/`), runs
mypy on it (settings: pyproject.toml's [tool.mypy]) and prints paths as the source folders' own.

    python tools/typecheck.py            # exit status: mypy's
"""

from __future__ import annotations

import configparser
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / ".data" / "typecheck"
# What is checked: the engine (every module of substrait_spark.consumer), the public entry points
# (docs/extending.md: SubstraitConsumer, the registry and Relation live in consumer/; to_dataframe in
# consumer/translation/translate.py; run_plan in plugin/api.py) and the readers of the typed run records
# (consumer/running/report.py): the run's composition root, the audit log, OpenLineage, Asset events, Dagster's
# materializations, the graph.
PACKAGES = ("substrait_spark.consumer",)
MODULES = (
    "substrait_spark.api",
    "substrait_spark.hooks.plan_run",
    "substrait_spark.hooks.audit",
    "substrait_spark.operators.openlineage",
    "substrait_spark.operators.substrait_spark",
    "substrait_spark.materializations",
    "substrait_spark.cli",
    "substrait_spark.graph",
    "substrait_spark.graph_app",
)


def package_dirs() -> dict[str, Path]:
    """setup.cfg's package_dir: import name -> source folder."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    out = {}
    for line in cfg["options"]["package_dir"].strip().splitlines():
        name, _, folder = (part.strip() for part in line.partition("="))
        out[name] = ROOT / folder
    return out


def link_tree() -> dict[Path, Path]:
    """The package as links under TREE; returns link folder -> source folder (to print source paths)."""
    dirs = package_dirs()
    top = dirs.pop("substrait_spark")
    pkg = TREE / "substrait_spark"
    pkg.mkdir(parents=True, exist_ok=True)
    wanted = {f.name: f for f in top.glob("*.py")}
    wanted.update({name.rpartition(".")[2]: folder for name, folder in dirs.items()})
    for entry in pkg.iterdir():
        if entry.name not in wanted or entry.resolve() != wanted[entry.name].resolve():
            entry.unlink()
    for name, target in wanted.items():
        link = pkg / name
        if not link.is_symlink():
            link.symlink_to(target)
    mapping = {pkg / name: folder for name, folder in wanted.items() if folder.is_dir()}
    mapping[pkg] = top
    return mapping


def source_path(line: str, mapping: dict[Path, Path]) -> str:
    for link, folder in sorted(mapping.items(), key=lambda kv: -len(str(kv[0]))):
        prefix = f"{os.path.relpath(link, ROOT)}/"
        if line.startswith(prefix):
            return f"{os.path.relpath(folder, ROOT)}/{line[len(prefix) :]}"
    return line


def main() -> int:
    from mypy import api

    mapping = link_tree()
    os.chdir(ROOT)
    os.environ["MYPYPATH"] = os.path.relpath(TREE, ROOT)
    args = [arg for p in PACKAGES for arg in ("-p", p)] + [arg for m in MODULES for arg in ("-m", m)]
    start = time.monotonic()
    out, err, status = api.run([*args, *sys.argv[1:]])
    for line in out.splitlines():
        print(source_path(line, mapping))
    sys.stderr.write(err)
    print(f"mypy: {time.monotonic() - start:.1f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
