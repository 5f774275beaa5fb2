/**
 * The durable idempotency tier as the service uses it: {@link dev.exactly.payments.keys.DurableTier} begins,
 * checkpoints, finishes and hands over requests on the caller's connection (atomic phases), scopes and
 * fingerprints as the hot tier makes them, replay counts and key status.
 */
@NullMarked
package dev.exactly.payments.keys;

import org.jspecify.annotations.NullMarked;
