/**
 * Each guarded execution as a Micrometer {@code Observation} named {@code exactly.idempotency}: a span when
 * tracing is on, a timer when metrics are.
 */
@NullMarked
package dev.exactly.idempotency.spring.boot.observation;

import org.jspecify.annotations.NullMarked;
