# substrait-spark: environment, sample data, lint, tests, demo.   `make help` lists the targets.
#
# Everything the build needs comes from here: a virtualenv in .venv (editable install with the test extra)
# and TPC-H data made by tpchgen-cli in .data/. Both are stamped, so a second run does no work.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Touched after a successful `uv pip install -e '.[test,airflow,airflow-azure,connect,dagster,docs]'`; uv runs again only when these files change.
STAMP  := $(VENV)/.installed
INSTALL_INPUTS := setup.cfg pyproject.toml
# Both environments are installed by uv (from PyPI, into the venv first): it resolves the same packages as pip
# (checked: the same 268 versions for .venv) and keeps the wheels it built (pyspark is an sdist) in its cache, where
# pip rebuilt pyspark on every install; .venv's install took 4.5 min with pip on 2 cores. `--compile-bytecode` as pip
# does: without it the first import of every module compiles it (the CLI's start took 2.4 s of CPU instead of 0.5).
UV_VERSION := 0.13.9
uv_install = $(1) -m pip install -q --disable-pip-version-check 'uv==$(UV_VERSION)' && \
	$(dir $(1))uv pip install --compile-bytecode --python $(1)

# The second environment: pyspark 4.x (classic 4.x tests, the Spark Connect server, the 4.x Connect client).
VENV4  := .venv-spark4
PY4    := $(VENV4)/bin/python
STAMP4 := $(VENV4)/.installed
# Tests run on every Spark configuration besides classic 3.5 (the whole suite): the TPC-H corpora, the function
# conformance cases, the relation tests. Iceberg tests stay on 3.5: the runtime jar offline is built for 3.5 only.
MATRIX_TESTS := tests/test_tpch_corpus.py tests/test_conformance.py tests/test_relations.py tests/test_connect.py \
	tests/test_lateral_spark4.py tests/test_declared_types.py tests/test_connect_round_trips.py tests/test_subqueries.py

DATA       := .data
TPCH_SMALL := $(DATA)/tpch/sf0.01
TPCH_SF1   := $(DATA)/tpch/sf1
TPCH_SF10  := $(DATA)/tpch/sf10
# TPC-DS data and DuckDB's 99 query texts (DuckDB's dsdgen, pinned: tools/provision_tpcds.py).
TPCDS_SMALL := $(DATA)/tpcds/sf0.1
TPCDS_SF1   := $(DATA)/tpcds/sf1
# DuckDB releases the venv cannot hold (the TPC-DS generator, the DuckDB substrait producer): tools/pinned_envs.py.
PINNED      := $(DATA)/pinned
# Written by tools/provision_data.py once every table is in place.
DATA_STAMP := _PROVISIONED.json
# Iceberg Spark runtime, relocated Jackson, SQLite/PostgreSQL JDBC drivers; stamped by tools/provision_jars.py.
JARS       := $(DATA)/jars

CORPUS     ?= ../shared/corpus
DEMO_OUT   := $(DATA)/demo
DEMO_PLANS ?= \
	ibm-substrait-compliance-tpch/q01.json \
	ibm-substrait-compliance-tpch/q03.json \
	ibm-substrait-compliance-tpch/q06.json \
	consumer-testing-tpch-snapshots/q01-duckdb_plan.json \
	ibis-substrait-tpch/tpc_h01.json

PYTEST_ARGS ?=

# The embedded default stack: Spark local[*], bound to loopback, workers on the venv's interpreter.
export SPARK_LOCAL_IP := 127.0.0.1
export PYSPARK_PYTHON := $(CURDIR)/$(PY)

.PHONY: test-matrix help setup azurite venv venv-spark4 data data-sf1 data-sf10 data-tpcds data-tpcds-sf1 pinned jars check-java lint typecheck docs test test-fast demo demo-cli clean browser fuzz chaos

help:
	@echo "make demo      set up, start the embedded stack (S3 server, Airflow on SQLite, local Spark) and run the"
	@echo "               example DAGs with airflow dags test; prints the run reports and results"
	@echo "make demo-cli  run a few TPC-H plans from \$$CORPUS ($(CORPUS)) through the CLI and show the results"
	@echo "make test      set up, then ruff check, mypy, the docs site and pytest (PYTEST_ARGS='-k q01' to narrow)"
	@echo "make test-matrix  the Spark 4 and Spark Connect runs of MATRIX_TESTS alone (the second half of make test)"
	@echo "make docs      the documentation site (MkDocs, strict: a broken link fails) in $(SITE); open $(SITE)/index.html"
	@echo "make test-fast the inner loop (about a minute): ruff, mypy, the unit tests and a few Spark test modules"
	@echo "make chaos     durable/deferrable plan runs on a real Airflow deployment, workers and triggerers SIGKILLed"
	@echo "               (CHAOS_WORKER_KILLS=10 per victim: 20 worker kills; CHAOS_TRIGGERER_KILLS=10); figures in test-artifacts/chaos.json"
	@echo "make fuzz      FUZZ_CASES (10000) seeded mutations of the corpus plans through validate and run (FUZZ_SEED)"
	@echo "make lint      ruff check, the engine's stage order (tools/stage_order.py) and mypy (typecheck)"
	@echo "make venv      create $(VENV) and uv pip install -e '.[test,airflow,airflow-azure,connect,dagster,docs]' on pyspark 3.5 (only when setup.cfg/pyproject.toml change)"
	@echo "make azurite   install Azurite (the Azure Storage emulator the plan store tests start) under .tools/azurite (npm)"
	@echo "make venv-spark4  create $(VENV4): the same package on pyspark 4.x (Spark 4 tests, the Spark Connect server)"
	@echo "make data      TPC-H sf 0.01 parquet in $(TPCH_SMALL)"
	@echo "make data-sf1  TPC-H sf 1 parquet in $(TPCH_SF1) (benchmarks; not part of demo/test)"
	@echo "make data-sf10 TPC-H sf 10 parquet in $(TPCH_SF10) (~3.5 GB; bench-sf10)"
	@echo "make data-tpcds     TPC-DS sf 0.1 parquet and the 99 query texts in $(TPCDS_SMALL) (DuckDB's dsdgen, pinned)"
	@echo "make data-tpcds-sf1 TPC-DS sf 1 in $(TPCDS_SF1) (benchmarks; not part of demo/test)"
	@echo "make jars      Iceberg runtime + JDBC driver jars in $(JARS) (apt-get installs the Debian parts)"
	@echo "make browser   Debian's chromium for the plugin page test (apt-get; nothing to do when present)"
	@echo "make clean     remove $(VENV), $(DATA) and caches"

# ---- environment -------------------------------------------------------------------------------------

$(PY):
	bash tools/make_venv.sh "$(PYTHON)" $(VENV)

$(STAMP): $(INSTALL_INPUTS) tools/constraints-spark35.txt | $(PY)
	$(call uv_install,$(PY)) -e '.[test,airflow,airflow-azure,connect,dagster,docs]' -c tools/constraints-spark35.txt
	touch $@

venv: $(STAMP)

$(PY4):
	bash tools/make_venv.sh "$(PYTHON)" $(VENV4)

$(STAMP4): $(INSTALL_INPUTS) tools/constraints-spark4.txt | $(PY4)
	$(call uv_install,$(PY4)) -e '.[test,connect]' -c tools/constraints-spark4.txt
	touch $@

venv-spark4: $(STAMP4)

check-java:
	@bash tools/check_java.sh

setup: check-java venv venv-spark4 data data-tpcds pinned jars azurite

# Azurite, the Azure Storage emulator the plan store tests start (npm; Node 20 on the machine). Idempotent.
AZURITE_VERSION := 3.37.0
AZURITE_DIR     := .tools/azurite
$(AZURITE_DIR)/.installed-$(AZURITE_VERSION):
	mkdir -p $(AZURITE_DIR)
	npm install --prefix $(AZURITE_DIR) --no-audit --no-fund --no-save azurite@$(AZURITE_VERSION)
	touch $@

azurite: $(AZURITE_DIR)/.installed-$(AZURITE_VERSION)

# ---- sample data -------------------------------------------------------------------------------------

$(TPCH_SMALL)/$(DATA_STAMP): $(STAMP) tools/provision_data.py
	$(PY) tools/provision_data.py --scale-factor 0.01 --output-dir $(TPCH_SMALL)

$(TPCH_SF1)/$(DATA_STAMP): $(STAMP) tools/provision_data.py
	$(PY) tools/provision_data.py --scale-factor 1 --output-dir $(TPCH_SF1)

data: $(TPCH_SMALL)/$(DATA_STAMP)

data-sf1: $(TPCH_SF1)/$(DATA_STAMP)

$(TPCH_SF10)/$(DATA_STAMP): $(STAMP) tools/provision_data.py
	$(PY) tools/provision_data.py --scale-factor 10 --output-dir $(TPCH_SF10)

data-sf10: $(TPCH_SF10)/$(DATA_STAMP)

$(PINNED)/$(DATA_STAMP): $(STAMP) tools/pinned_envs.py
	$(PY) tools/pinned_envs.py
	touch $@

pinned: $(PINNED)/$(DATA_STAMP)

$(TPCDS_SMALL)/$(DATA_STAMP): $(STAMP) tools/provision_tpcds.py tools/tpcds_dsdgen.py tools/pinned_envs.py
	$(PY) tools/provision_tpcds.py --scale-factor 0.1 --output-dir $(TPCDS_SMALL)

$(TPCDS_SF1)/$(DATA_STAMP): $(STAMP) tools/provision_tpcds.py tools/tpcds_dsdgen.py tools/pinned_envs.py
	$(PY) tools/provision_tpcds.py --scale-factor 1 --output-dir $(TPCDS_SF1)

data-tpcds: $(TPCDS_SMALL)/$(DATA_STAMP)

data-tpcds-sf1: $(TPCDS_SF1)/$(DATA_STAMP)

# ---- jars (the embedded Iceberg stack) -------------------------------------------------------------

$(JARS)/$(DATA_STAMP): $(STAMP) tools/provision_jars.py $(shell find tools/rest_catalog/org/apache/iceberg/shaded -name "*.java")
	$(PY) tools/provision_jars.py --output-dir $(JARS)

jars: $(JARS)/$(DATA_STAMP)

# ---- browser (the plugin page test drives Debian's chromium through Playwright; not needed by the demo) --------

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium (apt-get)"; \
	  apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
	  { apt-get update -qq && apt-get install -y --no-install-recommends chromium; }; }

# ---- checks ------------------------------------------------------------------------------------------

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) tools/stage_order.py
	$(MAKE) --no-print-directory typecheck

# mypy on the engine and the public extension surface; what it checks is configured in pyproject.toml.
typecheck: $(STAMP)
	$(PY) tools/typecheck.py

# The documentation site (mkdocs.yml): docs/ and its generated pages, built strictly (a broken link, anchor or
# nav entry fails) and offline (no fonts or plugins that fetch). tests/test_docs.py runs the pages' examples.
SITE := $(DATA)/site

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(SITE)  # not --quiet: it hides the warnings strict counts
	@echo "docs: $(SITE)/index.html"

# The developer's inner loop: lint, the `unit` tier (no JVM, no Airflow, no browser) and FAST_SPARK_TESTS on one
# Spark session. About a minute; `make test` before sending a change (every tier, four Spark configurations).
FAST_SPARK_TESTS := tests/test_expressions.py tests/test_outer_references.py tests/test_lambdas.py

test-fast: venv data data-tpcds pinned lint
	@status=0; \
	$(call pytest_run,unit tier,$(PY) -m pytest -m unit -q $(PYTEST_ARGS)); \
	$(call pytest_run,a few Spark modules,$(PY) -m pytest -q $(FAST_SPARK_TESTS) $(PYTEST_ARGS)); \
	exit $$status

# The whole suite on classic Spark 3.5, then MATRIX_TESTS on classic 4.x, Spark Connect from the 4.x client and
# Spark Connect from the 3.5 client (tests/spark_modes.py). Every run goes; the first failure is the exit code.
# The Connect run from the 4.x client skips the plan invariant (tests/plan_invariants.py): its DataFrames are the
# 4.x API's, as in the classic 4 run, and the same Spark 4 plans them, so the check would repeat that run's (it
# cost 84 s of `explain` in a 358 s run on a busy machine); the run from the 3.5 client keeps it (the 3.5 API
# builds other plans).
# pytest exits 5 when it collected no tests: that is a failure here, never a pass. (Running the matrix beside the
# suite, niced, was tried: on 2 cores the matrix took 29 min instead of 7.5 and slowed the suite. So was sharing each
# run between 2 pytest-xdist workers, a module per turn: the suite used 1.6 cores on average and gained about 11 min,
# but its deployment and chaos tests failed their timing under the other worker's load; the Connect matrix run from
# the 3.5 client took 251 s instead of 202 with 1.9 cores busy.)
define pytest_run
echo "== pytest: $(1)"; start=$$(date +%s); rc=0; \
$(2) || rc=$$?; \
if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests (exit 5); treated as a failure" >&2; fi; \
echo "== $(1): exit $$rc in $$(( $$(date +%s) - start ))s"; [ $$status -ne 0 ] || status=$$rc
endef

define matrix_runs
$(call pytest_run,classic Spark 4,SUBSTRAIT_SPARK_TEST_MODE=classic PYSPARK_PYTHON=$(CURDIR)/$(PY4) \
  $(PY4) -m pytest $(MATRIX_TESTS) $(PYTEST_ARGS)); \
$(call pytest_run,Spark Connect 4 from the 4 client,SUBSTRAIT_SPARK_TEST_MODE=connect \
  SUBSTRAIT_SPARK_PLAN_INVARIANT=off $(PY4) -m pytest $(MATRIX_TESTS) $(PYTEST_ARGS)); \
$(call pytest_run,Spark Connect 4 from the 3.5 client,SUBSTRAIT_SPARK_TEST_MODE=connect \
  $(PY) -m pytest $(MATRIX_TESTS) $(PYTEST_ARGS))
endef

test: setup browser lint docs
	@status=0; \
	$(call pytest_run,classic Spark 3.5 (all tests),$(PY) -m pytest --durations=40 $(PYTEST_ARGS)); \
	$(matrix_runs); \
	exit $$status

# MATRIX_TESTS on the three other Spark configurations alone (the second half of `make test`).
test-matrix: setup
	@status=0; \
	$(matrix_runs); \
	exit $$status

# ---- demo --------------------------------------------------------------------------------------------

demo: setup
	@[ -d "$(CORPUS)" ] || { echo "error: no corpus at $(CORPUS): set CORPUS=/path/to/shared/corpus" >&2; exit 2; }
	rm -rf $(DEMO_OUT)
	$(PY) tools/demo.py --corpus $(CORPUS) --tables-dir $(TPCH_SMALL)

demo-cli: setup
	@[ -d "$(CORPUS)" ] || { echo "error: no corpus at $(CORPUS): set CORPUS=/path/to/shared/corpus" >&2; exit 2; }
	@missing=0; for p in $(addprefix $(CORPUS)/,$(DEMO_PLANS)); do \
	  [ -f "$$p" ] || { echo "error: plan not found: $$p" >&2; missing=1; }; \
	done; exit $$missing
	rm -rf $(DEMO_OUT)
	@cmd=($(VENV)/bin/substrait-spark run $(addprefix $(CORPUS)/,$(DEMO_PLANS)) \
	  --tables-dir $(TPCH_SMALL) --output-dir $(DEMO_OUT) --output-format csv); \
	echo "$${cmd[*]}"; rc=0; "$${cmd[@]}" || rc=$$?; \
	$(PY) tools/show_results.py $(DEMO_OUT) --format csv; \
	if [ $$rc -ne 0 ]; then echo "demo: substrait-spark run exited $$rc" >&2; fi; \
	exit $$rc

# ---- fuzzing ----------------------------------------------------------------------------------------

# The engine's fuzz target (tests/fuzz_plans.py): FUZZ_CASES seeded mutations of every corpus plan through validate
# and run, in process; the figure goes to test-artifacts/fuzz/summary.json. `make test` runs 200 of them.
# FUZZ_ONLY=N runs case N of FUZZ_SEED alone (the reproducer a failure prints). A manual target: about an hour.
FUZZ_CASES ?= 10000
FUZZ_SEED  ?= 18

fuzz: venv data jars
	SUBSTRAIT_SPARK_PLAN_INVARIANT=off FUZZ_CASES=$(FUZZ_CASES) FUZZ_SEED=$(FUZZ_SEED) $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz.py $(PYTEST_ARGS)

# ---- chaos -------------------------------------------------------------------------------------------

# Durable and deferrable plan runs on a real Airflow deployment (tests/test_chaos.py): CHAOS_WORKER_KILLS seeded
# runs per victim (the task process; the task and its supervisor) and CHAOS_TRIGGERER_KILLS runs of a deferrable
# task whose triggerer is SIGKILLed, each counted (DAG run state, output rows against DuckDB, the server's SQL
# executions per output). `make test` runs 1 + 1 + 1 of them; figures go to test-artifacts/chaos.json.
CHAOS_WORKER_KILLS    ?= 10
CHAOS_TRIGGERER_KILLS ?= 10
CHAOS_SEED            ?= 30

chaos: setup
	CHAOS_WORKER_KILLS=$(CHAOS_WORKER_KILLS) CHAOS_TRIGGERER_KILLS=$(CHAOS_TRIGGERER_KILLS) CHAOS_SEED=$(CHAOS_SEED) \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/test_chaos.py -k "killed" $(PYTEST_ARGS)
	@cat test-artifacts/chaos.json | $(PY) -c "import json,sys; [print(k, {x: y for x, y in v.items() if x != 'runs_detail'}) for k, v in json.load(sys.stdin).items()]"

# ---- cleanup -----------------------------------------------------------------------------------------

clean:
	rm -rf $(VENV) $(VENV4) $(DATA) .tools build dist *.egg-info .pytest_cache .ruff_cache \
	  spark-warehouse metastore_db derby.log test-artifacts
	find . -path ./.git -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# ---- benchmarks --------------------------------------------------------------------------------------

# Translation time, execution time at sf1 and physical plans vs Spark SQL; regenerates bench/RESULTS.md.
# BENCH_ROUNDS / BENCH_WARMUP (execution rounds per query, default 3 / 1); see bench/README.md.
.PHONY: bench bench-rowlevel bench-sf10 bench-tpcds
bench: venv data data-sf1
	$(PY) bench/run_all.py

# Row-level DELETE/UPDATE at sf1 in Iceberg vs Spark SQL's own statements: section (d) of bench/RESULTS.md.
bench-rowlevel: venv data-sf1 jars
	$(PY) bench/rowlevel.py

# Execution at sf10 vs Spark SQL (BENCH_ROUNDS / BENCH_WARMUP): its own section of bench/RESULTS.md.
bench-sf10: venv data-sf10
	$(PY) bench/run_all.py --sf10-only

# TPC-DS: DataFusion's 99 plans vs Spark SQL on DuckDB's texts (physical plans, translation on classic and Spark
# Connect, execution at sf1): the TPC-DS sections of bench/RESULTS.md (bench/tpcds.py, bench/README.md).
bench-tpcds: venv venv-spark4 data-tpcds data-tpcds-sf1
	$(PY) bench/run_all.py --tpcds-only
