/**
 * The durable idempotency tier as the service uses it: scopes and fingerprints as the hot tier makes them
 * ({@link dev.exactly.payments.keys.IdempotentRoutes}), replay counts and key status. The records themselves
 * are the library's atomic phases ({@code dev.exactly.idempotency.postgres.AtomicPhases}), begun,
 * checkpointed and finished by the charge and refund services in their own transactions.
 */
@NullMarked
package dev.exactly.payments.keys;

import org.jspecify.annotations.NullMarked;
