/**
 * Reconciliation: the processor's captures and refunds compared with the charge and refund rows and the
 * ledger, and every mismatch listed. Business code: it returns a {@link
 * dev.exactly.payments.reconciliation.ReconciliationReport}, which only the web layer renders.
 */
@NullMarked
package dev.exactly.payments.reconciliation;

import org.jspecify.annotations.NullMarked;
