package dev.exactly.payments.reconciliation;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One disagreement between the processor and the service's books.
 *
 * @param kind              what disagrees
 * @param subject           a capture, or the refunds of one charge (compared as totals per charge)
 * @param chargeId          the service's charge, or {@code null} when the processor's record names none
 * @param processorChargeId the processor's charge, or {@code null} when the processor has no record
 * @param currency          the currency of both amounts
 * @param processorAmount   what the processor moved (minor units; 0 when it has no record)
 * @param ledgerAmount      what the ledger journaled (minor units; 0 when it has no entry)
 * @param detail            a sentence for the operator
 */
public record Mismatch(
        Kind kind,
        Subject subject,
        @Nullable String chargeId,
        @Nullable String processorChargeId,
        String currency,
        long processorAmount,
        long ledgerAmount,
        String detail) {

    /** What disagrees; the wire names are stable. */
    public enum Kind {
        /** The processor moved money the ledger does not show. */
        IN_PROCESSOR_NOT_LEDGER,
        /** Both have it, with different amounts (or the charge row disagrees with its ledger entry). */
        AMOUNT_DIFFERS,
        /** The ledger shows money the processor never moved. */
        IN_LEDGER_NOT_PROCESSOR;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What was compared. */
    public enum Subject {
        CAPTURE,
        REFUNDS;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
