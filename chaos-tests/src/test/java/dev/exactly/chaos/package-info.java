/**
 * Fault tests against real processes: two payment service instances sharing one PostgreSQL schema and
 * one Redis, a processor stand-in, faults that really happen (kill -9, SIGSTOP past the lease, Redis
 * restart and FLUSHALL, PostgreSQL immediate restart, processor timeouts and lost responses), a load of
 * duplicated client requests, and an invariant checker run after each fault.
 */
@NullMarked
package dev.exactly.chaos;

import org.jspecify.annotations.NullMarked;
