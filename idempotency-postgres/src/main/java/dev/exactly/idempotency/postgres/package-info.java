/**
 * The PostgreSQL idempotency store: {@link dev.exactly.idempotency.postgres.PostgresIdempotencyStore}
 * (one SQL statement per transition, LISTEN/NOTIFY wake-ups, finishing inside the caller's transaction),
 * its settings {@link dev.exactly.idempotency.postgres.PostgresStoreConfig} and its table
 * {@link dev.exactly.idempotency.postgres.PostgresSchema}.
 */
@NullMarked
package dev.exactly.idempotency.postgres;

import org.jspecify.annotations.NullMarked;
