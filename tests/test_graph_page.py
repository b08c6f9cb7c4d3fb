"""The Airflow plugin page, in a real browser: `airflow dags test` runs the example table pipeline (so a task
instance with a run report exists), a real `airflow api-server` serves the plugin's FastAPI app, and headless
Chromium (Debian's, driven by Playwright) signs in and opens the task instance's graph page.

The screenshot is kept in `.data/artifacts/substrait_graph_page.png` (its path is printed).
"""

from __future__ import annotations

import json
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from local_stack import AirflowStack, ServerDidNotStart, free_port, seed_plans, serving

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.airflow, pytest.mark.browser, pytest.mark.corpus]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / ".data" / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DAG, TASK = "substrait_table_pipeline", "big_orders"
PASSWORD = "graph-test-pw"


@pytest.fixture(scope="module")
def pipeline_run(tmp_path_factory, s3_endpoint, tpch_dir, corpus):
    seed_plans(s3_endpoint, corpus)
    home = tmp_path_factory.mktemp("airflow-graph")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports")
    stack.migrate()
    stack.ensure_lake()
    run = stack.dags_test(DAG, "2024-06-01")
    assert run.state == "success", run.log[-5000:]
    return stack, run


@pytest.fixture(scope="module")
def api_server(pipeline_run):
    stack, _ = pipeline_run
    port = free_port()
    passwords = stack.home / "simple_auth_passwords.json"
    passwords.write_text(json.dumps({"viewer": PASSWORD}))
    env = stack.env(
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="viewer:viewer",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(passwords),
        AIRFLOW__API_AUTH__JWT_SECRET="substrait-spark-graph-test",
        AIRFLOW__API__BASE_URL=f"http://127.0.0.1:{port}",
    )
    exe = Path(sys.executable).parent / "airflow"
    cmd = [str(exe), "api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    base = f"http://127.0.0.1:{port}"
    try:
        with serving(cmd, f"{base}/api/v2/monitor/health", stack.home / "api-server.log", env=env, cwd=ROOT):
            yield base
    except ServerDidNotStart as exc:
        pytest.fail(str(exc))


def _page_path(run_id: str, map_index: int = -1) -> str:
    return f"/substrait-spark/runs/{DAG}/{quote(run_id, safe='')}/{TASK}?map_index={map_index}"


def _token(base: str) -> str:
    body = json.dumps({"username": "viewer", "password": PASSWORD}).encode()
    request = urllib.request.Request(f"{base}/auth/token", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["access_token"]


def test_plugin_page_needs_a_signed_in_user(api_server, pipeline_run):
    _, run = pipeline_run
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(api_server + _page_path(run.run_id), timeout=10)
    assert err.value.code == 401


def test_plugin_page_shows_the_graph_in_chromium(api_server, pipeline_run):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium")
    _, run = pipeline_run
    report = run.value(TASK)
    page_path = _page_path(run.run_id)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "substrait_graph_page.png"
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS[1:])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            # Signed in as the UI is: the simple auth manager's JWT in Airflow's cookie (a viewer may read XComs).
            context.add_cookies([{"name": "_token", "value": _token(api_server), "url": api_server}])
            page = context.new_page()
            response = page.goto(api_server + page_path)
            assert response is not None and response.status == 200, response and response.text()[:2000]
            svg = page.locator("svg.substrait-graph")
            svg.wait_for()
            kinds = [g.get_attribute("data-kind") for g in page.locator("svg.substrait-graph g.node").all()]
            # Three roots over CTAS, INSERT and DELETE on demo.big_orders: write, project/filter, read, tables.
            assert kinds.count("root") == 3 and kinds.count("write") == 3 and kinds.count("read") == 3
            assert kinds.count("step") == 3 and kinds.count("table") == 2
            steps = page.locator("svg.substrait-graph g.node.step")
            texts = [steps.nth(i).text_content() for i in range(steps.count())]
            for step, text in zip(report["steps"], texts, strict=True):
                assert f"step {step['index']}: {step['kind']}" in text
                assert "lake.demo.big_orders" in text and "committed" in text and f"rows: {step['rows']}" in text
            tables = page.locator("svg.substrait-graph g.node.table").all_text_contents()
            assert any("table orders" in t for t in tables) and any("table demo.big_orders" in t for t in tables)
            assert page.locator("svg.substrait-graph text.header").first.text_content().startswith("plan: s3://")
            assert report["plan_sha256"] in page.content()
            assert page.locator("table.lineage tbody tr").count() > 0
            box = svg.bounding_box()
            assert box and box["width"] > 600 and box["height"] > 400  # laid out, not an empty element
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"\nscreenshot of the plugin page: {shot}")
    assert shot.stat().st_size > 10_000


def test_plugin_and_link_are_registered(api_server, pipeline_run):
    """The API server lists the plugin's FastAPI app and the task-instance view; the link points at the page."""
    from substrait_spark.operators.links import graph_link

    stack, run = pipeline_run
    done = stack.airflow("plugins", "--output", "json")
    assert done.returncode == 0, done.stderr[-3000:]
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    plugin = plugins["substrait_spark"]
    assert "/substrait-spark" in json.dumps(plugin.get("fastapi_apps"))
    assert "task_instance" in json.dumps(plugin.get("external_views"))
    assert graph_link(DAG, run.run_id, TASK) == _page_path(run.run_id)
