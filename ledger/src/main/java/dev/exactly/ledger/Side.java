package dev.exactly.ledger;

import java.util.Locale;

/** The side of a posting, and the normal balance of an account. */
public enum Side {
    /** Left: increases assets and expenses. */
    DEBIT,
    /** Right: increases liabilities, revenue and equity. */
    CREDIT;

    /** The other side. */
    public Side opposite() {
        return this == DEBIT ? CREDIT : DEBIT;
    }

    /** The value stored in the database ({@code debit}, {@code credit}). */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The side stored as {@code value} in the database. */
    public static Side fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
