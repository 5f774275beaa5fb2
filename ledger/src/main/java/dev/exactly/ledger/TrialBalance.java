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
 * Σdebits = Σcredits in every currency ({@link #isBalanced()}), for the available balances and, by
 * themselves, for the pending amounts of open holds (each pending entry balances per currency, and so
 * does each release of one).
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
            totals.merge(
                    currency.code(),
                    new Totals(line.debit(), line.credit(), line.pendingDebit(), line.pendingCredit()),
                    Totals::plus);
        }
        return new TrialBalance(asOf, lines, totals);
    }

    /** Whether Σdebits = Σcredits in every currency, for the available balances and for the pending amounts. */
    public boolean isBalanced() {
        return totals.values().stream().allMatch(Totals::isBalanced);
    }

    /** The line of one account, if it exists. */
    public Optional<Line> line(long accountId) {
        return lines.stream().filter(l -> l.account().id() == accountId).findFirst();
    }

    /**
     * An account, its normal-side available balance and its net pending amount.
     *
     * @param account the account
     * @param balance the signed normal-side available balance
     * @param pending the signed normal-side net amount of its open holds
     */
    public record Line(Account account, Money balance, Money pending) {

        /** A line without pending amounts. */
        public Line(Account account, Money balance) {
            this(account, balance, Money.zero(balance.currency()));
        }

        /** The balance in the debit column (zero if it belongs in the credit column). */
        public Money debit() {
            return column(balance, Side.DEBIT);
        }

        /** The balance in the credit column (zero if it belongs in the debit column). */
        public Money credit() {
            return column(balance, Side.CREDIT);
        }

        /** The net pending amount in the debit column (zero if it belongs in the credit column). */
        public Money pendingDebit() {
            return column(pending, Side.DEBIT);
        }

        /** The net pending amount in the credit column (zero if it belongs in the debit column). */
        public Money pendingCredit() {
            return column(pending, Side.CREDIT);
        }

        private Money column(Money amount, Side side) {
            Side actual = amount.isNegative() ? account.normalBalance().opposite() : account.normalBalance();
            if (actual != side || amount.isZero()) {
                return Money.zero(amount.currency());
            }
            return amount.isNegative() ? amount.negate() : amount;
        }
    }

    /**
     * The column totals of one currency.
     *
     * @param debits         Σ of the debit column of the available balances
     * @param credits        Σ of the credit column of the available balances
     * @param pendingDebits  Σ of the debit column of the pending amounts
     * @param pendingCredits Σ of the credit column of the pending amounts
     */
    public record Totals(Money debits, Money credits, Money pendingDebits, Money pendingCredits) {

        /** Totals without pending amounts. */
        public Totals(Money debits, Money credits) {
            this(debits, credits, Money.zero(debits.currency()), Money.zero(debits.currency()));
        }

        /** Whether the two columns are equal, for the available balances and for the pending amounts. */
        public boolean isBalanced() {
            return debits.equals(credits) && pendingDebits.equals(pendingCredits);
        }

        Totals plus(Totals other) {
            return new Totals(
                    debits.plus(other.debits),
                    credits.plus(other.credits),
                    pendingDebits.plus(other.pendingDebits),
                    pendingCredits.plus(other.pendingCredits));
        }
    }
}
