package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The README's example, verbatim (the documentation check of the examples module finds it here), run on
 * a fresh schema: a charge in the caller's transaction, a partial refund and its reversal, balances; and
 * the two-phase example: a hold, its partial capture, an expired hold voided by a worker.
 */
class ReadmeExampleTest extends LedgerTestSupport {

    @Test
    void theReadmeExampleRunsAndBalances() throws Exception {
        Instant asOf = START;
        try (Connection connection = dataSource.getConnection()) {
            LedgerSchema.migrate(dataSource); // or run the db/ledger migrations with Flyway
            Ledger ledger = Ledger.of(dataSource, clock); // clock: an InstantSource

            Currency usd = Currency.of("USD");
            Account clearing = ledger.openAccount(
                    AccountSpec.of("clearing:psp:USD", AccountType.ASSET, usd).withShards(16));
            Account customer = ledger.openAccount(AccountSpec.of("customer:42:USD", AccountType.LIABILITY, usd)
                    .withFloor(0));

            // inside the payment service's own transaction: the charge row, the journal entry and the
            // idempotency record commit together
            connection.setAutoCommit(false);
            JournalEntry charge = ledger.post(
                    connection,
                    EntryRequest.builder()
                            .debit(clearing.id(), Money.parse("100.00", "USD"))
                            .credit(customer.id(), Money.parse("100.00", "USD"))
                            .externalRef("charge:ch_123") // unique: a retry gets this entry, another a conflict
                            .description("charge ch_123")
                            .build());
            // ... insert the charge row, finish the idempotency record ...
            connection.commit(); // the ledger never commits the caller's transaction

            // a partial refund: a new entry linked to the charge
            JournalEntry refund = ledger.post(EntryRequest.refundOf(charge.id())
                    .debit(customer.id(), Money.parse("25.00", "USD"))
                    .credit(clearing.id(), Money.parse("25.00", "USD"))
                    .externalRef("refund:re_1")
                    .build());
            ledger.reverse(refund.id(), "reversal:re_1", "payout failed"); // the mirror image, at most once per entry

            ledger.balance(customer.id()); // current, from the balance rows
            ledger.balance(customer.id(), asOf); // point in time, from the postings
            ledger.trialBalance().isBalanced(); // Σdebits = Σcredits per currency
            ledger.entries(EntryQuery.first(50).forAccount(customer.id())); // keyset pages
        }
        // the charge stands, its refund was reversed: the customer is owed the whole charge again
        Account customer = ledger.account("customer:42:USD").orElseThrow();
        assertThat(ledger.balance(customer.id())).isEqualTo(Money.parse("100.00", "USD"));
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).hasSize(3);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void theTwoPhaseExampleRunsAndBalances() throws Exception {
        Account clearing =
                open(AccountSpec.of("clearing:psp:USD", AccountType.ASSET, USD).withShards(16));
        Account customer = open(
                AccountSpec.of("customer:42:USD", AccountType.LIABILITY, USD).withFloor(0));
        JournalEntry stale = ledger.hold(transfer(clearing, customer, 1_000));
        Instant cutoff = clock.advance(Duration.ofDays(7));
        try (Connection connection = connection()) {
            // authorize: the amounts are pending on both sides, no available balance moves
            JournalEntry auth = ledger.hold(
                    connection,
                    EntryRequest.builder()
                            .debit(clearing.id(), Money.parse("80.00", "USD"))
                            .credit(customer.id(), Money.parse("80.00", "USD"))
                            .externalRef("auth:ch_124")
                            .build());
            connection.commit();
            ledger.balances(customer.id()); // available 0.00, pending increase 80.00

            // capture part of it: posts 50.00 and releases the whole hold, so the other 30.00 are released
            ledger.capture(connection, auth.id(), Money.parse("50.00", "USD"), "capture:ch_124", "capture ch_124");
            // or the whole hold: ledger.capture(connection, auth.id(), "capture:ch_124", "..."), or voidHold
            connection.commit();

            // the recovery worker: expired holds, one per transaction, shared by several workers (SKIP LOCKED)
            for (JournalEntry expired : ledger.lockOpenHolds(connection, cutoff, 1)) {
                ledger.voidHold(connection, expired.id(), "void:" + expired.id(), "authorization expired");
            }
            connection.commit();
        }
        assertThat(ledger.balances(customer.id())).isEqualTo(new AccountBalance(usd(5_000), usd(0), usd(0)));
        assertThat(ledger.pendingHold(stale.id()).orElseThrow().state()).isEqualTo(PendingHold.State.VOIDED);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }
}
