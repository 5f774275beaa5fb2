/**
 * The Java client's retry rules ({@link dev.exactly.idempotency.client.RetrySequence}) for Spring's HTTP
 * clients: {@link dev.exactly.idempotency.client.spring.IdempotencyRetryInterceptor} for
 * {@code RestClient} (and {@code RestTemplate}), {@link dev.exactly.idempotency.client.spring.IdempotencyRetryFilter}
 * for {@code WebClient}. Both retry only requests that carry an {@code Idempotency-Key}, and never change it.
 */
@NullMarked
package dev.exactly.idempotency.client.spring;

import org.jspecify.annotations.NullMarked;
