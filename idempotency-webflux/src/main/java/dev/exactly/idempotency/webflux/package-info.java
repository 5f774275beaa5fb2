/**
 * The Spring WebFlux adapter of Exactly: {@link dev.exactly.idempotency.webflux.IdempotencyWebFilter} gives
 * configured routes of a reactive application the HTTP semantics of the servlet filter (the same routes,
 * problems and recording rules, from {@code idempotency-servlet}'s
 * {@link dev.exactly.idempotency.servlet.HttpProtocol}), running every store call off the event loop.
 */
@NullMarked
package dev.exactly.idempotency.webflux;

import org.jspecify.annotations.NullMarked;
