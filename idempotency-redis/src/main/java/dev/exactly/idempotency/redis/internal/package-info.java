/** Implementation details of the Redis store; not an API. */
@NullMarked
package dev.exactly.idempotency.redis.internal;

import org.jspecify.annotations.NullMarked;
