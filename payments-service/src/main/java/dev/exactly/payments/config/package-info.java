/** Wiring: properties, the database (configured or embedded), schema migrations, the processor and both idempotency tiers. */
@NullMarked
package dev.exactly.payments.config;

import org.jspecify.annotations.NullMarked;
