/** The durable idempotency tier as the service uses it: scopes, claims, replays, key status. */
@NullMarked
package dev.exactly.payments.keys;

import org.jspecify.annotations.NullMarked;
