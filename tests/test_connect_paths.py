"""Relative paths given to the client mean the client's working directory, also on Spark Connect (issue 28 item 4).

Before, `run --output-dir ../out` over Spark Connect failed (`No such file or directory:
'../out/.substrait-…/out'`) and the server left `.substrait-*` folders relative to *its* working directory: the
paths reached the server as given. Checked with the CLI binary of each client against a real local Connect server
(tests/spark_modes.py), run from a working directory of its own, with relative `--output-dir`, `--table` and
`--tables-dir`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.corpus]

REPO = Path(__file__).resolve().parent.parent
CLIENTS = {"pyspark-3.5": REPO / ".venv" / "bin", "pyspark-4": REPO / ".venv-spark4" / "bin"}
Q06_REVENUE = 1193053.2253  # IBM's expected/q06.csv at sf 0.01


def _entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _stray(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob(".substrait-*"))


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("bind", ["--table", "--tables-dir"])
def test_relative_paths_are_the_clients_on_spark_connect(
    client, bind, connect_url, corpus, tpch_dir, tmp_path, tmp_path_factory
):
    cli = CLIENTS[client] / "substrait-spark"
    if not cli.exists():
        pytest.skip(f"{cli} not installed")
    server_dirs = sorted(tmp_path_factory.getbasetemp().glob("connect-server*"))
    assert server_dirs, "the connect_url fixture's server folder"
    server_dir = server_dirs[0]
    around = {d: _entries(d) for d in (server_dir, server_dir.parent)}
    work = tmp_path / "client" / "work"
    (work / "data").mkdir(parents=True)
    shutil.copy(tpch_dir / "lineitem.parquet", work / "data" / "lineitem.parquet")
    binding = ["--table", "lineitem=data/lineitem.parquet"] if bind == "--table" else ["--tables-dir", "data"]
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_MODE_ENABLED"}
    done = subprocess.run(
        [str(cli), "run", str(corpus / "ibm-substrait-compliance-tpch" / "q06.json"), "--master", connect_url,
         *binding, "--output-dir", "../out"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    out = tmp_path / "client" / "out"
    rows = (out / "q06.csv").read_text().splitlines()
    assert len(rows) == 2 and float(rows[1]) == pytest.approx(Q06_REVENUE)
    (entry,) = json.loads((out / "summary.json").read_text())["plans"]
    assert entry["outputs"][0]["location"] == str(out / "q06.csv")
    assert _stray(out) == [] and _stray(server_dir) == []
    # Nothing new in the server's working directory nor beside it (where its `../out` would be).
    assert {d: _entries(d) for d in around} == around
