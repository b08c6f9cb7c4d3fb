"""The plan cache: ``.data/producers/<producer>-<version>/<name>.bin`` (or ``<name>.error`` when the producer
could not write that plan), with ``manifest.json`` holding the sha256 of the source each file was made from."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_ROOT = REPO_ROOT / ".data" / "producers"
MANIFEST = "manifest.json"
LOCK = ".lock"


@dataclass(frozen=True)
class Generated:
    """One source's outcome: the plan file, or the producer's own error (its first line)."""

    name: str
    plan: Path | None
    error: str | None = None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cache_dir(producer: str, version: str) -> Path:
    return CACHE_ROOT / f"{producer}-{version}"


def _outcome(folder: Path, name: str) -> Generated | None:
    plan, error = folder / f"{name}.bin", folder / f"{name}.error"
    if plan.is_file():
        return Generated(name, plan)
    if error.is_file():
        return Generated(name, None, error.read_text().strip())
    return None


# generate(staging_dir, names): writes <name>.bin, or <name>.error with the reason, for each name.
Generator = Callable[[Path, list[str]], None]


def cached_plans(producer: str, version: str, sources: dict[str, str], generate: Generator) -> dict[str, Generated]:
    """Every source's plan, generating (into a staging folder, then moved in) those not cached for this text. One
    process at a time per folder (test runs at once share the cache): the others wait, then find the plans."""
    folder = cache_dir(producer, version)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _cached_plans(folder, producer, version, sources, generate)


def _cached_plans(
    folder: Path, producer: str, version: str, sources: dict[str, str], generate: Generator
) -> dict[str, Generated]:
    manifest_file = folder / MANIFEST
    manifest: dict[str, str] = json.loads(manifest_file.read_text()) if manifest_file.is_file() else {}
    stale = [n for n, text in sources.items() if manifest.get(n) != digest(text) or _outcome(folder, n) is None]
    if stale:
        with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{folder.name}-") as tmp:
            staging = Path(tmp)
            generate(staging, stale)
            for name in stale:
                made = _outcome(staging, name)
                if made is None:
                    raise RuntimeError(f"{producer} {version}: no plan and no error written for {name}")
                for suffix in (".bin", ".error"):
                    (folder / f"{name}{suffix}").unlink(missing_ok=True)
                src = made.plan or staging / f"{name}.error"
                shutil.move(src, folder / src.name)
                manifest[name] = digest(sources[name])
        tmp_manifest = manifest_file.with_suffix(".tmp")
        tmp_manifest.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.replace(tmp_manifest, manifest_file)
    return {n: _outcome(folder, n) for n in sources}  # type: ignore[misc]
