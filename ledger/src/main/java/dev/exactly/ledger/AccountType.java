package dev.exactly.ledger;

import java.util.Locale;

/** The five classes of double-entry accounts, each with its usual normal balance. */
public enum AccountType {
    /** What is owned or owed to us, e.g. the processor clearing account. Debit-normal. */
    ASSET(Side.DEBIT),
    /** What is owed to others, e.g. a customer's or merchant's balance. Credit-normal. */
    LIABILITY(Side.CREDIT),
    /** Income, e.g. fees. Credit-normal. */
    REVENUE(Side.CREDIT),
    /** Costs, e.g. processor fees paid. Debit-normal. */
    EXPENSE(Side.DEBIT),
    /** Owners' stake. Credit-normal. */
    EQUITY(Side.CREDIT);

    private final Side normalBalance;

    AccountType(Side normalBalance) {
        this.normalBalance = normalBalance;
    }

    /** The side on which accounts of this type usually grow (a contra account may override it). */
    public Side normalBalance() {
        return normalBalance;
    }

    /** The value stored in the database ({@code asset}, ...). */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The type stored as {@code value} in the database. */
    public static AccountType fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
