/**
 * The HTTP benchmark: an embedded Tomcat serving a trivial JSON endpoint, unguarded and guarded by the
 * idempotency filter on each store, driven by a closed-loop load generator on virtual threads.
 */
@NullMarked
package dev.exactly.benchmarks.http;

import org.jspecify.annotations.NullMarked;
