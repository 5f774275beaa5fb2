/**
 * The store SPI. A store implements a handful of atomic primitives ({@code claim}, {@code complete},
 * {@code release}, {@code renew}, {@code find}) and a change notification; the state machine and all
 * policy live in the engine. Every store must pass the contract suite in {@code idempotency-store-tck}.
 */
@NullMarked
package dev.exactly.idempotency.spi;

import org.jspecify.annotations.NullMarked;
