/** A reactive Spring Boot application whose payment routes are guarded by {@code @Idempotent}. */
@NullMarked
package dev.exactly.examples.webflux;

import org.jspecify.annotations.NullMarked;
