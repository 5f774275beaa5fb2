package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

class BalanceFloorTest extends LedgerTestSupport {

    @Test
    void anEntryThatWouldCrossAFloorIsRefusedAndLeavesNothing() {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);
        ledger.post(transfer(cash, wallet, 1_000)); // top-up: the wallet owes the customer 10.00

        assertThatThrownBy(() -> ledger.post(transfer(wallet, shop, 1_001)))
                .isInstanceOfSatisfying(BalanceFloorException.class, e -> {
                    assertThat(e.code()).isEqualTo("ledger_balance_floor");
                    assertThat(e.accountId()).isEqualTo(wallet.id());
                    assertThat(e.floor()).isEqualTo(usd(0));
                    assertThat(e.balance()).isEqualTo(usd(1_000));
                    assertThat(e.change()).isEqualTo(usd(-1_001));
                });
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).hasSize(1);
        assertThat(ledger.balance(shop.id())).isEqualTo(usd(0));

        ledger.post(transfer(wallet, shop, 1_000)); // exactly to the floor is fine
        assertThat(ledger.balance(wallet.id())).isEqualTo(usd(0));
    }

    @Test
    void anOverdraftLimitIsANegativeFloor() {
        Account cash = open(AccountSpec.of("cash", AccountType.ASSET, USD).withFloor(-5_000));
        Account expense = open("expense", AccountType.EXPENSE);
        ledger.post(transfer(expense, cash, 5_000));
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(-5_000));
        assertThatThrownBy(() -> ledger.post(transfer(expense, cash, 1))).isInstanceOf(BalanceFloorException.class);
        // an entry that raises the balance is never held back by the floor
        ledger.post(transfer(cash, expense, 1));
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(-4_999));
    }

    @Test
    void inTheCallersTransactionTheRefusalLeavesTheRollbackToTheCaller() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        try (Connection c = connection()) {
            ledger.post(c, transfer(cash, wallet, 100));
            assertThatThrownBy(() -> ledger.post(c, transfer(wallet, cash, 101)))
                    .isInstanceOf(BalanceFloorException.class);
            c.rollback();
        }
        assertThat(ledger.balance(wallet.id())).isEqualTo(usd(0));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void aCallerThatCommitsAfterTheRefusalCommitsNoHalfEntry() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);
        ledger.post(transfer(cash, wallet, 100));
        Money cashBefore = ledger.balance(cash.id());
        try (Connection c = connection()) {
            // the refused entry touches two other accounts: their balance rows were written before the refusal
            assertThatThrownBy(() -> ledger.post(
                            c,
                            EntryRequest.builder()
                                    .debit(wallet.id(), usd(101))
                                    .credit(shop.id(), usd(50))
                                    .credit(cash.id(), usd(51))
                                    .build()))
                    .isInstanceOf(BalanceFloorException.class);
            try {
                c.commit(); // a caller treating the refusal as "insufficient funds" and going on
            } catch (java.sql.SQLException rolledBack) {
                // the transaction could only roll back
            }
        }
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).hasSize(1);
        assertThat(ledger.balance(wallet.id())).isEqualTo(usd(100));
        assertThat(ledger.balance(shop.id())).isEqualTo(usd(0));
        assertThat(ledger.balance(cash.id())).isEqualTo(cashBefore);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void onAnAutoCommitConnectionAnEntryIsStillAllOrNothing() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        try (Connection c = dataSource.getConnection()) {
            assertThat(c.getAutoCommit()).isTrue();
            ledger.post(c, transfer(cash, wallet, 100));
            // the entry row is written before the floor is checked: it must not survive the refusal
            assertThatThrownBy(() -> ledger.post(c, transfer(wallet, cash, 101)))
                    .isInstanceOf(BalanceFloorException.class);
            assertThat(c.getAutoCommit()).isTrue();
        }
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).hasSize(1);
        assertThat(ledger.balance(wallet.id())).isEqualTo(usd(100));
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(100));
    }

    @Test
    void sixteenConcurrentSpendersNeverTakeTheBalanceBelowTheFloor() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);
        long funded = 20_000;
        ledger.post(transfer(cash, wallet, funded));

        int threads = 16;
        int attempts = 30;
        record Outcome(long spent, int accepted, int refused) {}
        List<Outcome> outcomes = concurrently(threads, t -> () -> {
            long spent = 0;
            int accepted = 0;
            int refused = 0;
            try (Connection c = connection()) {
                for (int i = 0; i < attempts; i++) {
                    long amount = ThreadLocalRandom.current().nextLong(1, 200);
                    try {
                        ledger.post(c, transfer(wallet, shop, amount));
                        c.commit();
                        spent += amount;
                        accepted++;
                    } catch (BalanceFloorException e) {
                        c.rollback();
                        refused++;
                    }
                }
            }
            return new Outcome(spent, accepted, refused);
        });

        long spent = outcomes.stream().mapToLong(Outcome::spent).sum();
        int accepted = outcomes.stream().mapToInt(Outcome::accepted).sum();
        int refused = outcomes.stream().mapToInt(Outcome::refused).sum();
        assertThat(accepted + refused).isEqualTo(threads * attempts);
        assertThat(refused)
                .as("the attempts exceed the funds, so the floor was really hit")
                .isPositive();

        Money balance = ledger.balance(wallet.id());
        assertThat(balance.minorUnits()).isGreaterThanOrEqualTo(0);
        assertThat(balance).isEqualTo(usd(funded - spent));
        assertThat(ledger.balance(shop.id())).isEqualTo(usd(spent));
        assertThat(ledger.entries(EntryQuery.first(1000).forAccount(shop.id())).entries())
                .hasSize(accepted);
        assertThat(ledger.balance(wallet.id(), clock.instant())).isEqualTo(balance);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }
}
