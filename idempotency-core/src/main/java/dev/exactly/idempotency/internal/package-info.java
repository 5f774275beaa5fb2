/** Implementation details; not API. */
@NullMarked
package dev.exactly.idempotency.internal;

import org.jspecify.annotations.NullMarked;
