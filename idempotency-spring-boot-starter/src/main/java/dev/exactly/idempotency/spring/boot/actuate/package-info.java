/** The operators' Actuator endpoint {@code idempotency}: read a record by tenant and key, release a stuck one. */
@NullMarked
package dev.exactly.idempotency.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
