/**
 * The idempotency engine of Exactly: keys, scopes, fingerprints, the record state machine and the
 * {@link dev.exactly.idempotency.IdempotencyEngine} that guards an action so that it runs at most once
 * per scope. Nothing here knows HTTP, Redis, PostgreSQL or Spring.
 */
@NullMarked
package dev.exactly.idempotency;

import org.jspecify.annotations.NullMarked;
