/**
 * The payments benchmark: the payment service's executable jar as a process on PostgreSQL and Redis,
 * {@code POST /v1/charges} driven by wrk with fresh keys, every answer checked, the books checked
 * afterwards (charges = processor captures = journal entries, trial balance balanced), and pgbench's
 * single-row commit rate measured in the same run as the physical reference.
 */
@NullMarked
package dev.exactly.benchmarks.payments;

import org.jspecify.annotations.NullMarked;
