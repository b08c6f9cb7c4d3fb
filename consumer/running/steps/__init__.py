"""Write, DDL and update relations as tracked pipeline steps: each one atomic, retry-safe commit, recorded in the
run report in plan order. `targets` is the catalog interface, `log` the step records and idempotency keys,
`writes`/`ddl`/`update` one module per relation kind, `update_key` where an UPDATE write's key comes from."""
