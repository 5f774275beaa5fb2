#!/usr/bin/env bash
# Redis instructions per operation in one command (see README, "Benchmarks"): installs Valgrind when it
# is missing, builds the benchmark jar with the project's JDK, and counts what redis-server executes for
# the physical floor's commands and for the Redis store's, each phase alone. Options are system
# properties, e.g.  benchmarks/redis-instructions.sh -Dexactly.bench.operations=20000
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

. scripts/need-command.sh
need_command callgrind_control valgrind "callgrind counts redis-server's instructions"
need_command redis-server redis-server "the server whose instructions are counted"

rm -rf benchmarks/target
./mvnw -q -B -ntp -pl benchmarks -am -DskipTests package
exec java "$@" -cp benchmarks/target/benchmarks.jar dev.exactly.benchmarks.store.RedisInstructions
