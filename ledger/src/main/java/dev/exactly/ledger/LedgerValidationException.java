package dev.exactly.ledger;

import org.jspecify.annotations.Nullable;

/** The input can't be accepted as it is: the caller must fix it (retrying it unchanged won't help). */
public final class LedgerValidationException extends LedgerException {

    /** What was wrong with the input; each reason has its own stable code. */
    public enum Reason {
        /** The currency code is not in the shipped ISO 4217 table. */
        UNKNOWN_CURRENCY("ledger_unknown_currency"),
        /** Malformed, non-positive where a positive amount is needed, or more decimals than the currency has. */
        INVALID_AMOUNT("ledger_invalid_amount"),
        /** A sum or difference does not fit in a {@code long} of minor units. */
        AMOUNT_OVERFLOW("ledger_amount_overflow"),
        /** Two amounts in different currencies were combined, or a posting's currency is not its account's. */
        CURRENCY_MISMATCH("ledger_currency_mismatch"),
        /** An entry has fewer than two postings. */
        TOO_FEW_POSTINGS("ledger_too_few_postings"),
        /** An entry's debits and credits differ in at least one currency. */
        UNBALANCED("ledger_unbalanced"),
        /** A posting names an account that does not exist. */
        UNKNOWN_ACCOUNT("ledger_unknown_account"),
        /** An entry to reverse, refund or adjust does not exist. */
        UNKNOWN_ENTRY("ledger_unknown_entry"),
        /** An account specification is not valid (code, shards, floor). */
        INVALID_ACCOUNT("ledger_invalid_account"),
        /** An entry request is not valid (kind and link, reference, description, query). */
        INVALID_ENTRY("ledger_invalid_entry");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        /** The stable code of this reason. */
        public String code() {
            return code;
        }
    }

    private final Reason reason;

    public LedgerValidationException(Reason reason, String message) {
        this(reason, message, null);
    }

    public LedgerValidationException(Reason reason, String message, @Nullable Throwable cause) {
        super(reason.code(), message, cause);
        this.reason = reason;
    }

    /** Why the input was refused. */
    public Reason reason() {
        return reason;
    }
}
