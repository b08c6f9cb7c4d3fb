"""The project's definitions: every `defs.yaml` under `defs/` (the Substrait plans component instances)."""

from pathlib import Path

import dagster as dg

defs = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
