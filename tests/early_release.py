"""pytest plugin (registered by conftest.py): session fixtures that keep busy servers stop after the last test using
them, not at the session's end, and the test modules using them run one after another.

An idle Airflow deployment is not idle: its scheduler, dag-processor, triggerer and api-server poll with the short
heartbeats the kill tests need, about 12% of a core measured on 2 cores. Kept to the end of the classic run, the
deployment the durable-run tests start early (test_airflow_deployment sorts first) burned that through every
later module. Such a fixture enters its servers on `hold(request, name)`'s ExitStack, which this plugin closes in
the teardown of the last collected test whose fixtures include `name` (directly or through another fixture); the
fixture's own exit at the session's end then has nothing left to close.
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest

# The session fixtures released early, in the order they may depend on each other (a later one uses an earlier one:
# the deployment's connection points at `connect_with_ui`'s server), so they are closed last-first.
RELEASED = ("connect_with_ui", "deployment")
PLUGIN = "early_release"


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def grouped(items: list[pytest.Item], names: tuple[str, ...] = RELEASED) -> list[pytest.Item]:
    """`items` with the modules that use any of `names` moved together, to where the first of them stood; the order
    within and between those modules, and of all other items, is kept."""
    using = list(dict.fromkeys(module_of(i) for i in items if set(names) & set(i.fixturenames)))
    if not using:
        return items
    first = next(n for n, i in enumerate(items) if module_of(i) in using)
    rest = [i for i in items if module_of(i) not in using]
    moved = sorted((i for i in items if module_of(i) in using), key=lambda i: using.index(module_of(i)))
    return rest[:first] + moved + rest[first:]


class EarlyRelease:
    def __init__(self) -> None:
        self.stacks: dict[str, ExitStack] = {}
        self.last_user: dict[str, str] = {}
        self.released: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items[:] = grouped(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # After deselection (`-k`, `-m`): the last test that will run decides.
        for item in session.items:
            for name in RELEASED:
                if name in item.fixturenames:
                    self.last_user[name] = item.nodeid

    def hold(self, name: str) -> ExitStack:
        assert name in RELEASED, f"{name} is not in early_release.RELEASED"
        self.stacks[name] = stack = ExitStack()
        return stack

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        for name in reversed(RELEASED):
            if self.last_user.get(name) == item.nodeid and name in self.stacks:
                self.stacks.pop(name).close()
                self.released.append(f"{name} after {item.nodeid}")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.released:
            terminalreporter.write_line(f"stopped before the session's end: {'; '.join(self.released)}")


def register(config: pytest.Config) -> None:
    config.pluginmanager.register(EarlyRelease(), PLUGIN)


def hold(request: pytest.FixtureRequest, name: str) -> ExitStack:
    """The ExitStack fixture `name` enters its servers on: closed after the last test using `name`, and again (doing
    nothing more) when the fixture exits."""
    plugin = request.config.pluginmanager.get_plugin(PLUGIN)
    assert isinstance(plugin, EarlyRelease)
    return plugin.hold(name)
