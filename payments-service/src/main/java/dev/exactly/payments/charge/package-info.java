/**
 * Charges: the atomic phases with recovery points, the processor call and the recovery worker. Every
 * operation returns a business result ({@link dev.exactly.payments.charge.ChargeResult},
 * {@link dev.exactly.payments.charge.OperatorResult}); the answer a finished charge records is rendered by
 * {@link dev.exactly.payments.charge.ChargeAnswers}, which the web layer implements.
 */
@NullMarked
package dev.exactly.payments.charge;

import org.jspecify.annotations.NullMarked;
