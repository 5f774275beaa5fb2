package dev.exactly.ledger;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an account should be, for {@link Ledger#openAccount}. Build with {@link #of} and the
 * {@code with...} methods:
 * <pre>{@code
 * AccountSpec.of("clearing:psp:USD", AccountType.ASSET, usd).withShards(16)
 * AccountSpec.of("customer:42:USD", AccountType.LIABILITY, usd).withFloor(0)
 * }</pre>
 *
 * @param code             a unique business name of the account, 1 to 200 characters
 * @param type             the account class
 * @param normalBalance    the side on which the balance grows; the type's unless it is a contra account
 * @param currency         the only currency the account holds
 * @param floorMinorUnits  a lower bound (zero or negative, in minor units) on the normal-side balance,
 *                         checked under a row lock whenever an entry lowers it; {@code null}: none
 * @param shards           how many balance rows share the account's balance (1 to 1024); more than one
 *                         lets concurrent entries touch the account without waiting for each other.
 *                         A sharded account can't have a floor.
 */
public record AccountSpec(
        String code,
        AccountType type,
        Side normalBalance,
        Currency currency,
        @Nullable Long floorMinorUnits,
        int shards) {

    /** The largest number of shards an account may have. */
    public static final int MAX_SHARDS = 1024;

    public AccountSpec {
        if (code.isEmpty() || code.length() > 200) {
            throw new LedgerValidationException(Reason.INVALID_ACCOUNT, "account code must have 1 to 200 characters");
        }
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new LedgerValidationException(
                    Reason.INVALID_ACCOUNT, "shards must be between 1 and " + MAX_SHARDS + ", not " + shards);
        }
        if (floorMinorUnits != null && floorMinorUnits > 0) {
            throw new LedgerValidationException(
                    Reason.INVALID_ACCOUNT,
                    "a floor must be zero or negative (an overdraft limit), not " + floorMinorUnits);
        }
        if (floorMinorUnits != null && shards > 1) {
            throw new LedgerValidationException(
                    Reason.INVALID_ACCOUNT,
                    "a sharded account can't have a floor: its balance is not in one row to lock");
        }
    }

    /** An unsharded account without a floor, with the type's normal balance. */
    public static AccountSpec of(String code, AccountType type, Currency currency) {
        return new AccountSpec(code, type, type.normalBalance(), currency, null, 1);
    }

    /** This spec with a floor of {@code minorUnits} (zero or negative). */
    public AccountSpec withFloor(long minorUnits) {
        return new AccountSpec(code, type, normalBalance, currency, minorUnits, shards);
    }

    /** This spec with a floor given as money in the account's currency. */
    public AccountSpec withFloor(Money floor) {
        if (!floor.currency().equals(currency)) {
            throw new LedgerValidationException(
                    Reason.CURRENCY_MISMATCH, "floor " + floor + " is not in the account's currency " + currency);
        }
        return withFloor(floor.minorUnits());
    }

    /** This spec with {@code shards} balance rows. */
    public AccountSpec withShards(int shards) {
        return new AccountSpec(code, type, normalBalance, currency, floorMinorUnits, shards);
    }

    /** This spec with another normal balance (a contra account, e.g. an allowance against an asset). */
    public AccountSpec withNormalBalance(Side normalBalance) {
        return new AccountSpec(code, type, normalBalance, currency, floorMinorUnits, shards);
    }

    /** Whether {@code account} is what this spec describes. */
    public boolean matches(Account account) {
        return code.equals(account.code())
                && type == account.type()
                && normalBalance == account.normalBalance()
                && currency.equals(account.currency())
                && Objects.equals(floorMinorUnits, account.floorMinorUnits())
                && shards == account.shards();
    }
}
