#!/usr/bin/env bash
# The payments benchmark in one command (see README, "Benchmarks"): installs the load generator (Debian's
# wrk) and the reference (pgbench, Debian's postgresql-client) when missing, builds the payment service's
# jar and the benchmark with the project's JDK, and runs it against PostgreSQL 127.0.0.1:5432 (db test)
# and Redis 127.0.0.1:6379. Options are system properties, e.g.
#   benchmarks/payments-benchmark.sh -Dexactly.bench.seconds=30 -Dexactly.bench.jfr=/tmp/charges.jfr
# Exits 1 if any answer failed its checks or the books disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

install() {
  echo "installing $*" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}
command -v wrk >/dev/null 2>&1 || install wrk
command -v wrk >/dev/null 2>&1 || { echo "error: could not install wrk (apt-get install -y wrk)" >&2; exit 1; }
if ! command -v pgbench >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1; then
  install postgresql-client
fi

./mvnw -q -B -ntp -pl payments-benchmark -am -DskipTests package
exec java -Dexactly.repo.root=. "$@" -jar payments-benchmark/target/payments-benchmark.jar
