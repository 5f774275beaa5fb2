/**
 * The Actuator health indicator of the idempotency store. Needs {@code spring-boot-health} on the class
 * path (it comes with {@code spring-boot-starter-actuator}).
 */
@NullMarked
package dev.exactly.idempotency.spring.boot.health;

import org.jspecify.annotations.NullMarked;
