/** A bounded in-process store, for tests and for a single-process hot tier. */
@NullMarked
package dev.exactly.idempotency.memory;

import org.jspecify.annotations.NullMarked;
