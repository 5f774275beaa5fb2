/**
 * Micrometer metrics of the idempotency engine: {@link
 * dev.exactly.idempotency.spring.boot.metrics.MicrometerIdempotencyListener}. Needs
 * {@code io.micrometer:micrometer-core} on the class path.
 */
@NullMarked
package dev.exactly.idempotency.spring.boot.metrics;

import org.jspecify.annotations.NullMarked;
