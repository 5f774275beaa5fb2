/**
 * Refunds through the processor in atomic phases, like charges: {@link dev.exactly.payments.refund.RefundService}
 * (phase 1, bounded by the charge under its row lock) and {@link dev.exactly.payments.refund.RefundExecutor}
 * (phases 2 and 3, and the recovery worker's resume of refunds), returning a
 * {@link dev.exactly.payments.refund.RefundResult}; the answers refunds record are rendered by
 * {@link dev.exactly.payments.refund.RefundAnswers}, which the web layer implements.
 */
@NullMarked
package dev.exactly.payments.refund;

import org.jspecify.annotations.NullMarked;
