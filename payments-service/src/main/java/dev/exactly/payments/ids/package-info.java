/** Unguessable ids and secrets: a prefix and base-62 characters. */
@NullMarked
package dev.exactly.payments.ids;

import org.jspecify.annotations.NullMarked;
