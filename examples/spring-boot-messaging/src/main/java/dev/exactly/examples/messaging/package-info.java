/** A Spring Boot message listener that books each payment event once, whatever the broker redelivers. */
@NullMarked
package dev.exactly.examples.messaging;

import org.jspecify.annotations.NullMarked;
