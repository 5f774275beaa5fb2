/** Implementation details of the client; not API. */
@NullMarked
package dev.exactly.idempotency.client.internal;

import org.jspecify.annotations.NullMarked;
