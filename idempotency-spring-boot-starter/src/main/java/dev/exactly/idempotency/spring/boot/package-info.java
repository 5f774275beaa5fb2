/**
 * Spring Boot auto-configuration of Exactly's idempotency filter: the {@code exactly.idempotency.*}
 * properties ({@link dev.exactly.idempotency.spring.boot.IdempotencyProperties}), the store (memory,
 * Redis or PostgreSQL), the engine, the servlet filter registration, Micrometer metrics and an
 * Actuator health indicator.
 */
@NullMarked
package dev.exactly.idempotency.spring.boot;

import org.jspecify.annotations.NullMarked;
