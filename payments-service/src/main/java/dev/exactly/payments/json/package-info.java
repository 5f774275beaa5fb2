/**
 * JSON as the service reads and writes it: strict parsing (duplicate members refused, bounded nesting),
 * bodies validated member by member into field errors, and output in a fixed member order so that the
 * bytes of a document are determined by its content.
 */
@NullMarked
package dev.exactly.payments.json;

import org.jspecify.annotations.NullMarked;
