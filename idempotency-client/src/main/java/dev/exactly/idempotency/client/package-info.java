/**
 * The client half of Exactly: one idempotency key per logical intent ({@link
 * dev.exactly.idempotency.client.IdempotencyKeys}), and retries that reuse it with the same bytes
 * ({@link dev.exactly.idempotency.client.IdempotentHttpClient}, whose rules live in {@link
 * dev.exactly.idempotency.client.RetrySequence} so that every adapter applies the same ones). Keys that
 * must survive a crash are journaled by {@code dev.exactly.idempotency.client.intent}. Runtime
 * dependencies: the JDK only.
 */
@NullMarked
package dev.exactly.idempotency.client;

import org.jspecify.annotations.NullMarked;
