package dev.exactly.ledger;

import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Every account's balance in a debit or a credit column, with per-currency totals. In a sound ledger
 * Σdebits = Σcredits in every currency ({@link #isBalanced()}).
 *
 * @param asOf   the point in time, or {@code null} for the current balances
 * @param lines  one line per account, ordered by currency and account id
 * @param totals the column totals per currency code
 */
public record TrialBalance(@Nullable Instant asOf, List<Line> lines, Map<String, Totals> totals) {

    public TrialBalance {
        lines = List.copyOf(lines);
        totals = Collections.unmodifiableMap(new TreeMap<>(totals));
    }

    /** Builds the totals from the lines (exact arithmetic). */
    public static TrialBalance of(@Nullable Instant asOf, List<Line> lines) {
        Map<String, Totals> totals = new TreeMap<>();
        for (Line line : lines) {
            Currency currency = line.account().currency();
            totals.merge(currency.code(), new Totals(line.debit(), line.credit()), Totals::plus);
        }
        return new TrialBalance(asOf, lines, totals);
    }

    /** Whether Σdebits = Σcredits in every currency. */
    public boolean isBalanced() {
        return totals.values().stream().allMatch(Totals::isBalanced);
    }

    /** The line of one account, if it exists. */
    public Optional<Line> line(long accountId) {
        return lines.stream().filter(l -> l.account().id() == accountId).findFirst();
    }

    /**
     * An account and its normal-side balance.
     *
     * @param account the account
     * @param balance the signed normal-side balance
     */
    public record Line(Account account, Money balance) {

        /** The balance in the debit column (zero if it belongs in the credit column). */
        public Money debit() {
            return column(Side.DEBIT);
        }

        /** The balance in the credit column (zero if it belongs in the debit column). */
        public Money credit() {
            return column(Side.CREDIT);
        }

        private Money column(Side side) {
            Side actual = balance.isNegative() ? account.normalBalance().opposite() : account.normalBalance();
            if (actual != side || balance.isZero()) {
                return Money.zero(balance.currency());
            }
            return balance.isNegative() ? balance.negate() : balance;
        }
    }

    /**
     * The column totals of one currency.
     *
     * @param debits  Σ of the debit column
     * @param credits Σ of the credit column
     */
    public record Totals(Money debits, Money credits) {

        /** Whether the two columns are equal. */
        public boolean isBalanced() {
            return debits.equals(credits);
        }

        Totals plus(Totals other) {
            return new Totals(debits.plus(other.debits), credits.plus(other.credits));
        }
    }
}
