"""Stage 3, running: table resolution, the Spark client, the plan's write/DDL/update steps, result sinks and the
run report."""
