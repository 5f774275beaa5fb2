/** A plain Java application guarded by Exactly's engine: the README's "Guarding an action". */
@NullMarked
package dev.exactly.examples.plain;

import org.jspecify.annotations.NullMarked;
