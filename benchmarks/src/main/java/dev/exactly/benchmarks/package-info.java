/**
 * Benchmarks that compare, in one run on one machine: a guarded against an unguarded endpoint, each
 * idempotency store, and the raw capacity of Redis and PostgreSQL as the physical limit. They report
 * ratios; absolute figures only describe the machine they ran on.
 */
@NullMarked
package dev.exactly.benchmarks;

import org.jspecify.annotations.NullMarked;
