package dev.exactly.ledger;

/** An account with the requested code exists with a different type, currency, floor or sharding. */
public final class AccountConflictException extends LedgerException {

    private final Account existing;

    public AccountConflictException(Account existing, AccountSpec requested) {
        super(
                "ledger_account_conflict",
                "account " + existing.code() + " exists as " + existing + ", not as requested " + requested,
                null);
        this.existing = existing;
    }

    /** The account that holds the code. */
    public Account existing() {
        return existing;
    }
}
