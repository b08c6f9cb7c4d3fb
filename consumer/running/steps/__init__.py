"""Write, DDL and update relations as tracked pipeline steps: each one atomic, retry-safe commit, recorded in the
run report in plan order. `targets` is the catalog interface, `log` the step records and idempotency keys,
`writes`/`ddl`/`update` one module per relation kind, `update_key` where an UPDATE write's key comes from.
Translation records each step as a `PendingStep` (`translation/steps.py`) and commits nothing; `execute` runs
them for the runner."""
