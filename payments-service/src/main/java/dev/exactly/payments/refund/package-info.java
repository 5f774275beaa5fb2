/**
 * Refunds: one transaction, bounded by the charge under its row lock, returning a
 * {@link dev.exactly.payments.refund.RefundResult}; the answers decisions record are rendered by
 * {@link dev.exactly.payments.refund.RefundAnswers}, which the web layer implements.
 */
@NullMarked
package dev.exactly.payments.refund;

import org.jspecify.annotations.NullMarked;
