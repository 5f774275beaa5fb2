/**
 * The Jakarta Servlet adapter of Exactly: {@link dev.exactly.idempotency.servlet.IdempotencyFilter}
 * gives configured routes the HTTP semantics of idempotency keys (the {@code Idempotency-Key} header,
 * capture and byte-identical replay of the first response, RFC 9457 problem responses built by
 * {@link dev.exactly.idempotency.servlet.Problems}), on top of
 * {@link dev.exactly.idempotency.IdempotencyEngine}. No framework beyond the Servlet API.
 */
@NullMarked
package dev.exactly.idempotency.servlet;

import org.jspecify.annotations.NullMarked;
