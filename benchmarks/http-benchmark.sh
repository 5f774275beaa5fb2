#!/usr/bin/env bash
# The HTTP benchmark in one command (see README, "Benchmarks"): installs the load generator (Debian's wrk)
# when it is missing, builds the benchmark jar with the project's JDK, and runs it. Options are system
# properties, e.g.  benchmarks/http-benchmark.sh -Dexactly.bench.rounds=5 -Dexactly.bench.endpoints=unguarded,memory
# Exits 1 if any answer failed its checks or any guarded key ran twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (the load generator)" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  fi
  command -v wrk >/dev/null 2>&1 || { echo "error: could not install wrk (apt-get install -y wrk)" >&2; exit 1; }
fi

# the shaded jar is rebuilt from scratch: shading over a previous benchmarks.jar keeps its old classes and scripts
rm -rf benchmarks/target
./mvnw -q -B -ntp -pl benchmarks -am -DskipTests package
exec java -Xms2g -Xmx4g "$@" -cp benchmarks/target/benchmarks.jar dev.exactly.benchmarks.http.HttpBenchmark
