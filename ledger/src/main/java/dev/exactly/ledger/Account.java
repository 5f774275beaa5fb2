package dev.exactly.ledger;

import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * An account of the ledger. Accounts are immutable once opened.
 *
 * @param id              the ledger-assigned id; row locks are taken in ascending id order
 * @param code            the unique business name
 * @param type            the account class
 * @param normalBalance   the side on which the balance grows
 * @param currency        the only currency the account holds
 * @param floorMinorUnits the floor of the normal-side balance in minor units, {@code null} when none
 * @param shards          the number of balance rows (more than one for a hot account)
 * @param createdAt       when the account was opened
 */
public record Account(
        long id,
        String code,
        AccountType type,
        Side normalBalance,
        Currency currency,
        @Nullable Long floorMinorUnits,
        int shards,
        Instant createdAt) {

    /** The floor as money, if the account has one. */
    public Optional<Money> floor() {
        return floorMinorUnits == null ? Optional.empty() : Optional.of(Money.of(floorMinorUnits, currency));
    }

    /** Whether the account's balance is split over several rows. */
    public boolean isSharded() {
        return shards > 1;
    }

    /**
     * How a posting changes this account's normal-side balance: {@code +amount} on the normal side,
     * {@code -amount} on the other.
     */
    public long signedChange(Side side, long amount) {
        return side == normalBalance ? amount : Money.exact(() -> Math.negateExact(amount));
    }
}
