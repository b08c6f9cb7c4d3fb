"""pytest plugin (registered by conftest.py): how `make test` shares the tests between pytest-xdist workers.

`make test` runs the suite on 2 workers (`-n 2 --dist loadgroup`): many tests wait on a subprocess, a server or
one JVM thread, so one process keeps a 2-core machine about half idle. The unit of work a worker takes is a whole
test module — its module fixtures (a batch of plans, an Airflow home, a catalog) are made once — except the
modules using the servers `early_release.RELEASED` holds (the Airflow deployment, its Spark Connect server): they
are one unit, run one after another on one worker, so the servers start once and stop after their last test.
Modules go in collection order (not xdist's "most tests first"): the slow subprocess modules sort early and the
last unit handed out is a short one.

Without xdist (`-p no:xdist`, `-n 0`, or a plain `pytest tests/test_x.py`) this plugin changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from early_release import RELEASED, module_of

GROUP = "released-servers"


class WorkerScopes:
    @pytest.hookimpl(tryfirst=True)  # before xdist's worker appends each item's group to its node id
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        modules = {module_of(i) for i in items if set(RELEASED) & set(i.fixturenames)}
        for item in items:
            if module_of(item) in modules:
                item.add_marker(pytest.mark.xdist_group(GROUP))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class ModuleOrGroupScheduling(LoadScopeScheduling):
            """A work unit is a module, or every test of one `xdist_group` (the node id's `@name`)."""

            def _split_scope(self, nodeid: str) -> str:
                if nodeid.rfind("@") > nodeid.rfind("]"):
                    return nodeid.rsplit("@", 1)[-1]
                return nodeid.split("::", 1)[0]

        config.option.loadscopereorder = False
        return ModuleOrGroupScheduling(config, log)


def register(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(WorkerScopes(), "worker_scopes")
