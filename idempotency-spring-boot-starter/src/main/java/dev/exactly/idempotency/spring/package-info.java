/**
 * What a Spring application's own code uses: {@link dev.exactly.idempotency.spring.Idempotent} on controller
 * methods, and {@link dev.exactly.idempotency.spring.IdempotencyTemplate} for work that is not an HTTP request
 * (message listeners, jobs).
 */
@NullMarked
package dev.exactly.idempotency.spring;

import org.jspecify.annotations.NullMarked;
