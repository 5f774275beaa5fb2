/** A Spring Boot application whose payment routes Exactly's starter guards. */
@NullMarked
package dev.exactly.examples.boot;

import org.jspecify.annotations.NullMarked;
