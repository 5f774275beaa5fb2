package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * An amount of money: a {@code long} count of minor units (cents, yen, fils) of a {@link Currency}.
 * Arithmetic is exact and overflow-checked ({@link Math#addExact}); there is no {@code double} anywhere.
 * {@link BigDecimal} is used only at the edge, to {@link #parse} or {@link #toDecimal} a decimal text.
 * A {@code Money} may be negative (a balance); posting amounts must be positive.
 *
 * @param minorUnits the amount in minor units of the currency
 * @param currency   the currency
 */
public record Money(long minorUnits, Currency currency) implements Comparable<Money> {

    private static final Pattern DECIMAL = Pattern.compile("[+-]?[0-9]{1,40}(\\.[0-9]{1,40})?");

    public Money {
        Objects.requireNonNull(currency, "currency");
    }

    /** {@code minorUnits} of {@code currency}. */
    public static Money of(long minorUnits, Currency currency) {
        return new Money(minorUnits, currency);
    }

    /** {@code minorUnits} of the currency with this ISO 4217 code. */
    public static Money of(long minorUnits, String currencyCode) {
        return new Money(minorUnits, Currency.of(currencyCode));
    }

    /** Zero in {@code currency}. */
    public static Money zero(Currency currency) {
        return new Money(0, currency);
    }

    /**
     * Parses a plain decimal such as {@code "12.34"}, {@code "-5"} or {@code "0.500"} in the currency with
     * this code. Trailing zeros beyond the currency's decimals are accepted; any other extra decimal is
     * refused, never rounded.
     *
     * @throws LedgerValidationException {@link Reason#INVALID_AMOUNT} for a malformed amount or too many
     *     decimals, {@link Reason#UNKNOWN_CURRENCY}, {@link Reason#AMOUNT_OVERFLOW} beyond a {@code long}
     */
    public static Money parse(String amount, String currencyCode) {
        return parse(amount, Currency.of(currencyCode));
    }

    /** Like {@link #parse(String, String)} with a known currency. */
    public static Money parse(String amount, Currency currency) {
        if (!DECIMAL.matcher(amount).matches()) {
            String shown = amount.length() > 48 ? amount.substring(0, 48) + "..." : amount;
            throw new LedgerValidationException(Reason.INVALID_AMOUNT, "not a decimal amount: '" + shown + "'");
        }
        return ofDecimal(new BigDecimal(amount), currency);
    }

    /**
     * The exact amount {@code amount} of {@code currency}.
     *
     * @throws LedgerValidationException {@link Reason#INVALID_AMOUNT} when the amount has more decimals
     *     than the currency, {@link Reason#AMOUNT_OVERFLOW} when it does not fit in a {@code long}
     */
    public static Money ofDecimal(BigDecimal amount, Currency currency) {
        BigDecimal scaled;
        try {
            scaled = amount.setScale(currency.exponent(), RoundingMode.UNNECESSARY);
        } catch (ArithmeticException e) {
            throw new LedgerValidationException(
                    Reason.INVALID_AMOUNT,
                    amount.toPlainString() + " has more decimals than " + currency.code() + " allows ("
                            + currency.exponent() + ")");
        }
        try {
            return new Money(scaled.unscaledValue().longValueExact(), currency);
        } catch (ArithmeticException e) {
            throw new LedgerValidationException(
                    Reason.AMOUNT_OVERFLOW,
                    amount.toPlainString() + " " + currency.code() + " does not fit in 64-bit minor units");
        }
    }

    /** The amount as a decimal with the currency's number of decimals, e.g. {@code 12.34}. */
    public BigDecimal toDecimal() {
        return BigDecimal.valueOf(minorUnits, currency.exponent());
    }

    /** {@code this + other}; both in the same currency. */
    public Money plus(Money other) {
        requireSameCurrency(other);
        return new Money(exact(() -> Math.addExact(minorUnits, other.minorUnits)), currency);
    }

    /** {@code this - other}; both in the same currency. */
    public Money minus(Money other) {
        requireSameCurrency(other);
        return new Money(exact(() -> Math.subtractExact(minorUnits, other.minorUnits)), currency);
    }

    /** {@code -this}. */
    public Money negate() {
        return new Money(exact(() -> Math.negateExact(minorUnits)), currency);
    }

    /** Whether the amount is zero. */
    public boolean isZero() {
        return minorUnits == 0;
    }

    /** Whether the amount is greater than zero. */
    public boolean isPositive() {
        return minorUnits > 0;
    }

    /** Whether the amount is less than zero. */
    public boolean isNegative() {
        return minorUnits < 0;
    }

    /** Orders amounts of the same currency; amounts of different currencies are not comparable. */
    @Override
    public int compareTo(Money other) {
        requireSameCurrency(other);
        return Long.compare(minorUnits, other.minorUnits);
    }

    /** For example {@code 12.34 USD}. */
    @Override
    public String toString() {
        return toDecimal().toPlainString() + " " + currency.code();
    }

    private void requireSameCurrency(Money other) {
        if (!currency.equals(other.currency)) {
            throw new LedgerValidationException(Reason.CURRENCY_MISMATCH, "can't combine " + this + " with " + other);
        }
    }

    /** Runs an exact {@code long} operation, turning an overflow into a typed refusal. */
    static long exact(LongSupplier operation) {
        try {
            return operation.getAsLong();
        } catch (ArithmeticException e) {
            throw new LedgerValidationException(Reason.AMOUNT_OVERFLOW, "amount overflows 64-bit minor units");
        }
    }
}
