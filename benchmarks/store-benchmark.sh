#!/usr/bin/env bash
# The stores' JMH benchmark in one command (see README, "Benchmarks"): builds the benchmark jar with the
# project's JDK and runs it with that JDK (JMH forks its measuring JVMs from the same one). Arguments go to
# JMH, e.g.  benchmarks/store-benchmark.sh -p store=redis    or    benchmarks/store-benchmark.sh -h
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

# the shaded jar is rebuilt from scratch: shading over a previous benchmarks.jar keeps its old classes and scripts
rm -rf benchmarks/target
./mvnw -q -B -ntp -pl benchmarks -am -DskipTests package
exec java -jar benchmarks/target/benchmarks.jar "$@"
