/** Refunds: one transaction, bounded by the charge under its row lock. */
@NullMarked
package dev.exactly.payments.refund;

import org.jspecify.annotations.NullMarked;
