#!/usr/bin/env bash
# The HTTP benchmark in one command (see README, "Benchmarks"): installs the load generator (Debian's wrk)
# when it is missing, builds the benchmark jar with the project's JDK, and runs it. Options are system
# properties, e.g.  benchmarks/http-benchmark.sh -Dexactly.bench.rounds=5 -Dexactly.bench.endpoints=unguarded,memory
# Exits 1 if any answer failed its checks or any guarded key ran twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

. scripts/need-command.sh
need_command wrk wrk "the load generator"

# the shaded jar is rebuilt from scratch: shading over a previous benchmarks.jar keeps its old classes and scripts
rm -rf benchmarks/target
./mvnw -q -B -ntp -pl benchmarks -am -DskipTests package
# native access: -Dexactly.bench.profile loads the profiler's library with System.load
exec java -Xms2g -Xmx4g --enable-native-access=ALL-UNNAMED "$@" -cp benchmarks/target/benchmarks.jar \
  dev.exactly.benchmarks.http.HttpBenchmark
