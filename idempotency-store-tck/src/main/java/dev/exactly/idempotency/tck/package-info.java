/**
 * The store contract suite. A store module proves itself by extending
 * {@link dev.exactly.idempotency.tck.IdempotencyStoreContract} in its tests.
 */
@NullMarked
package dev.exactly.idempotency.tck;

import org.jspecify.annotations.NullMarked;
