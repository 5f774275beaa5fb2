/** Charges: the atomic phases with recovery points, the processor call and the recovery worker. */
@NullMarked
package dev.exactly.payments.charge;

import org.jspecify.annotations.NullMarked;
