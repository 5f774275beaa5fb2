#!/usr/bin/env bash
# The payments benchmark in one command (see README, "Benchmarks"): installs the load generator (Debian's
# wrk) when missing, finds the reference (pgbench, which Debian ships with the PostgreSQL server package;
# postgresql-client is tried where it is not there) or says how to get it, builds the payment service's
# jar and the benchmark with the project's JDK, and runs it against PostgreSQL 127.0.0.1:5432 (db test)
# and Redis 127.0.0.1:6379. Options are system properties, e.g.
#   benchmarks/payments-benchmark.sh -Dexactly.bench.seconds=30 -Dexactly.bench.jfr=/tmp/charges.jfr
# Exits 1 if any answer failed its checks or the books disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/select-jdk.sh
select_jdk

. scripts/need-command.sh
need_command wrk wrk "the load generator"
# pgbench, the reference: where Debian's PostgreSQL server package puts it, or one on the PATH that runs (Debian's
# /usr/bin/pgbench is a wrapper that needs that package); -Dexactly.bench.pgbench=0 leaves the reference out
working_pgbench() {
  ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || pgbench --version >/dev/null 2>&1
}
case " $* " in
  *" -Dexactly.bench.pgbench=0 "*) ;;
  *)
    if ! working_pgbench; then
      need_command pgbench postgresql-client "the commit rate the charges are set against"
      working_pgbench || { echo "error: no working pgbench: Debian ships it with the server package" \
        "(apt-get install -y postgresql-15); or pass -Dexactly.bench.pgbench=0 to run without the reference" >&2; exit 1; }
    fi
    ;;
esac

./mvnw -q -B -ntp -pl payments-benchmark -am -DskipTests package
exec java -Dexactly.repo.root=. "$@" -jar payments-benchmark/target/payments-benchmark.jar
