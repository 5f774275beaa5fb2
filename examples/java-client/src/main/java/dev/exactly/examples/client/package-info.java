/** The README's Java client snippets, compiled, and run by this module's test. */
@NullMarked
package dev.exactly.examples.client;

import org.jspecify.annotations.NullMarked;
