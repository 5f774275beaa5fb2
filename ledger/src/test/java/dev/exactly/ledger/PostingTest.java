package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostingTest extends LedgerTestSupport {

    @Test
    void aChargeDebitsClearingAndCreditsTheCustomer() {
        Account clearing =
                open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(4));
        Account customer = open("customer:1", AccountType.LIABILITY);

        JournalEntry entry = ledger.post(EntryRequest.builder()
                .debit(clearing.id(), Money.parse("100.00", "USD"))
                .credit(customer.id(), Money.parse("100.00", "USD"))
                .externalRef("charge:ch_1")
                .description("charge ch_1")
                .build());

        assertThat(entry.kind()).isEqualTo(EntryKind.STANDARD);
        assertThat(entry.postedAt()).isEqualTo(START);
        assertThat(entry.postings())
                .extracting(Posting::line, Posting::accountId, Posting::side)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1, clearing.id(), Side.DEBIT),
                        org.assertj.core.groups.Tuple.tuple(2, customer.id(), Side.CREDIT));
        assertThat(ledger.entry(entry.id())).contains(entry);
        assertThat(ledger.entryByExternalRef("charge:ch_1")).contains(entry);
        // both grow on their normal side
        assertThat(ledger.balance(clearing.id())).isEqualTo(usd(10_000));
        assertThat(ledger.balance(customer.id())).isEqualTo(usd(10_000));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void postingJoinsTheCallersTransactionAndNeverCommitsItself() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account revenue = open("revenue", AccountType.REVENUE);
        try (Connection c = connection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE charge (id text PRIMARY KEY, entry_id bigint NOT NULL)");
            }
            c.commit();
            JournalEntry rolledBack = ledger.post(c, transfer(cash, revenue, 500));
            assertThat(ledger.balance(c, cash.id())).isEqualTo(usd(500));
            assertThat(ledger.entry(rolledBack.id()))
                    .as("invisible to others before commit")
                    .isEmpty();
            c.rollback();
            assertThat(ledger.entry(rolledBack.id())).isEmpty();
            assertThat(ledger.balance(cash.id())).isEqualTo(usd(0));

            JournalEntry committed = ledger.post(c, transfer(cash, revenue, 700));
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO charge VALUES ('ch_1', ?)")) {
                ps.setLong(1, committed.id());
                ps.executeUpdate();
            }
            c.commit();
            assertThat(ledger.entry(committed.id())).contains(committed);
            assertThat(ledger.balance(cash.id())).isEqualTo(usd(700));
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT entry_id FROM charge")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isEqualTo(committed.id());
            }
        }
    }

    @Test
    void unknownAccountsAndForeignCurrenciesAreTypedRefusals() {
        Account cash = open("cash", AccountType.ASSET);
        Account euros = ledger.openAccount(AccountSpec.of("euros", AccountType.LIABILITY, EUR));

        assertThatThrownBy(() -> ledger.post(EntryRequest.builder()
                        .debit(cash.id(), usd(5))
                        .credit(999_999, usd(5))
                        .build()))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_ACCOUNT));
        assertThatThrownBy(() -> ledger.post(EntryRequest.builder()
                        .debit(cash.id(), usd(5))
                        .credit(euros.id(), usd(5))
                        .build()))
                .isInstanceOfSatisfying(LedgerValidationException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.CURRENCY_MISMATCH);
                    assertThat(e.code()).isEqualTo("ledger_currency_mismatch");
                });
        assertThatThrownBy(() -> ledger.post(EntryRequest.refundOf(424242)
                        .debit(cash.id(), usd(5))
                        .credit(cash.id(), usd(5))
                        .build()))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_ENTRY));
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).isEmpty();
    }

    @Test
    void aMultiCurrencyEntryBalancesPerCurrency() {
        Account usdCash = open("cash:USD", AccountType.ASSET);
        Account usdFx = open("fx:USD", AccountType.LIABILITY);
        Account eurCash = ledger.openAccount(AccountSpec.of("cash:EUR", AccountType.ASSET, EUR));
        Account eurFx = ledger.openAccount(AccountSpec.of("fx:EUR", AccountType.LIABILITY, EUR));

        JournalEntry fx = ledger.post(EntryRequest.builder()
                .debit(usdCash.id(), usd(10_000))
                .credit(usdFx.id(), usd(10_000))
                .debit(eurFx.id(), Money.of(9_200, EUR))
                .credit(eurCash.id(), Money.of(9_200, EUR))
                .build());

        assertThat(ledger.entry(fx.id())).contains(fx);
        assertThat(ledger.balance(eurCash.id())).isEqualTo(Money.of(-9_200, EUR));
        TrialBalance trial = ledger.trialBalance();
        assertThat(trial.totals()).containsOnlyKeys("EUR", "USD");
        assertThat(trial.totals().get("EUR"))
                .isEqualTo(new TrialBalance.Totals(Money.of(9_200, EUR), Money.of(9_200, EUR)));
        assertThat(trial.isBalanced()).isTrue();
    }

    @Test
    void openingAnAccountIsIdempotentByCode() {
        AccountSpec spec =
                AccountSpec.of("customer:7", AccountType.LIABILITY, USD).withFloor(0);
        Account first = ledger.openAccount(spec);
        clock.advance(Duration.ofHours(1));
        assertThat(ledger.openAccount(spec)).isEqualTo(first);
        assertThat(ledger.account(first.id())).contains(first);
        assertThat(ledger.account("customer:7")).contains(first);
        assertThat(first.floor()).contains(usd(0));
        assertThatThrownBy(() -> ledger.openAccount(spec.withShards(1).withNormalBalance(Side.DEBIT)))
                .isInstanceOfSatisfying(AccountConflictException.class, e -> {
                    assertThat(e.code()).isEqualTo("ledger_account_conflict");
                    assertThat(e.existing()).isEqualTo(first);
                });
        assertThat(ledger.account(123_456)).isEmpty();
    }

    @Test
    void entriesArePagedByKeysetOptionallyPerAccount() {
        Account cash = open("cash", AccountType.ASSET);
        Account a = open("a", AccountType.REVENUE);
        Account b = open("b", AccountType.REVENUE);
        List<Long> all = new ArrayList<>();
        List<Long> onA = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            Account target = i % 3 == 0 ? a : b;
            JournalEntry e = ledger.post(transfer(cash, target, 100 + i));
            all.add(e.id());
            if (target.equals(a)) {
                onA.add(e.id());
            }
        }
        assertThat(readAll(EntryQuery.first(10))).isEqualTo(all);
        assertThat(readAll(EntryQuery.first(4).forAccount(a.id()))).isEqualTo(onA);
        assertThat(readAll(EntryQuery.first(1000))).isEqualTo(all);
        EntryPage first = ledger.entries(EntryQuery.first(10));
        assertThat(first.entries()).hasSize(10);
        assertThat(first.next()).contains(EntryQuery.first(10).after(all.get(9)));
        assertThatThrownBy(() -> EntryQuery.first(0)).isInstanceOf(LedgerValidationException.class);
    }

    private List<Long> readAll(EntryQuery query) {
        List<Long> ids = new ArrayList<>();
        EntryQuery next = query;
        int pages = 0;
        while (next != null) {
            EntryPage page = ledger.entries(next);
            page.entries().forEach(e -> ids.add(e.id()));
            next = page.nextQuery();
            assertThat(++pages).isLessThan(100);
        }
        return ids;
    }

    @Test
    void anEntryMayTouchOneAccountTwice() {
        Account cash = open("cash", AccountType.ASSET);
        Account fees = open("fees", AccountType.REVENUE);
        JournalEntry entry = ledger.post(EntryRequest.builder()
                .debit(cash.id(), usd(1_000))
                .credit(cash.id(), usd(30))
                .credit(fees.id(), usd(970))
                .build());
        assertThat(entry.postings()).hasSize(3);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(970));
        assertThat(ledger.balance(cash.id(), START)).isEqualTo(usd(970));
    }
}
