package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Racing resolutions of one hold, and workers sharing expired holds, on real threads and PostgreSQL. */
class PendingConcurrencyTest extends LedgerTestSupport {

    private Account clearing;
    private Account customer;

    @BeforeEach
    void accounts() {
        clearing = open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(4));
        customer = open(AccountSpec.of("customer", AccountType.LIABILITY, USD).withFloor(0));
    }

    private JournalEntry authorize(long cents) {
        return ledger.hold(transfer(clearing, customer, cents));
    }

    @Test
    void ofRacingCapturesAndVoidsOfOneHoldExactlyOneCommits() throws Exception {
        int threads = 8;
        long captured = 0;
        for (int round = 0; round < 6; round++) {
            JournalEntry hold = authorize(1_000);
            // even threads capture 600 (each with its own reference), odd threads void
            List<Object> results = concurrently(threads, t -> () -> {
                try (Connection c = connection()) {
                    try {
                        JournalEntry e = t % 2 == 0
                                ? ledger.capture(c, hold.id(), usd(600), "capture:" + hold.id() + ":" + t, "")
                                : ledger.voidHold(c, hold.id(), null, "");
                        c.commit();
                        return e;
                    } catch (DuplicateEntryException e) {
                        c.rollback();
                        return e;
                    }
                }
            });
            List<JournalEntry> written = results.stream()
                    .filter(JournalEntry.class::isInstance)
                    .map(JournalEntry.class::cast)
                    .toList();
            assertThat(written).as("round %d", round).hasSize(1);
            JournalEntry winner = written.get(0);
            DuplicateEntryException.Reason lost = winner.kind() == EntryKind.CAPTURE
                    ? DuplicateEntryException.Reason.ALREADY_CAPTURED
                    : DuplicateEntryException.Reason.ALREADY_VOIDED;
            assertThat(results.stream()
                            .filter(DuplicateEntryException.class::isInstance)
                            .map(DuplicateEntryException.class::cast))
                    .hasSize(threads - 1)
                    .allSatisfy(e -> {
                        assertThat(e.reason()).isEqualTo(lost);
                        assertThat(e.existingEntryId()).isEqualTo(winner.id());
                    });
            assertThat(ledger.pendingHold(hold.id()).orElseThrow().resolution()).isEqualTo(winner);
            assertThat(ledger.linkedEntries(hold.id())).containsExactly(winner);
            if (winner.kind() == EntryKind.CAPTURE) {
                captured += 600;
            }
        }
        assertThat(ledger.balances(customer.id())).isEqualTo(new AccountBalance(usd(captured), usd(0), usd(0)));
        assertThat(ledger.balances(clearing.id())).isEqualTo(new AccountBalance(usd(captured), usd(0), usd(0)));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void racingRetriesOfOneCaptureAllGetTheSameEntry() throws Exception {
        JournalEntry hold = authorize(1_000);
        List<JournalEntry> results = concurrently(8, t -> () -> ledger.capture(hold.id(), usd(250), "capture:1", ""));
        assertThat(new HashSet<>(results)).hasSize(1);
        assertThat(ledger.pendingHold(hold.id()).orElseThrow().resolution()).isEqualTo(results.get(0));
        assertThat(ledger.balances(customer.id())).isEqualTo(new AccountBalance(usd(250), usd(0), usd(0)));
    }

    @Test
    void workersShareExpiredHoldsWhileCapturesRaceThem() throws Exception {
        int holds = 24;
        List<JournalEntry> all = new ArrayList<>();
        for (int i = 0; i < holds; i++) {
            all.add(authorize(100 + i));
        }
        Instant cutoff = clock.advance(Duration.ofMinutes(1));
        authorize(1); // not expired: never voided by the workers

        int workers = 3;
        // three workers void expired holds one per transaction; a fourth thread captures every third hold
        List<List<Long>> done = concurrently(workers + 1, t -> () -> {
            List<Long> mine = new ArrayList<>();
            try (Connection c = connection()) {
                if (t == workers) {
                    for (int i = 0; i < holds; i += 3) {
                        try {
                            mine.add(
                                    ledger.capture(c, all.get(i).id(), null, "").originalEntryId());
                            c.commit();
                        } catch (DuplicateEntryException e) {
                            assertThat(e.reason()).isEqualTo(DuplicateEntryException.Reason.ALREADY_VOIDED);
                            c.rollback();
                        }
                    }
                    return mine;
                }
                for (int guard = 0; guard < holds * 2; guard++) {
                    List<JournalEntry> expired = ledger.lockOpenHolds(c, cutoff, 1);
                    if (expired.isEmpty()) {
                        c.rollback();
                        break;
                    }
                    // locked by this worker, so nobody captures or voids it meanwhile
                    ledger.voidHold(
                            c, expired.get(0).id(), "expired:" + expired.get(0).id(), "expired");
                    c.commit();
                    mine.add(expired.get(0).id());
                }
            }
            return mine;
        });

        List<Long> resolved = done.stream().flatMap(List::stream).toList();
        assertThat(resolved)
                .as("every expired hold resolved once")
                .hasSize(holds)
                .doesNotHaveDuplicates();
        Set<Long> expected = new HashSet<>();
        all.forEach(h -> expected.add(h.id()));
        assertThat(resolved).containsExactlyInAnyOrderElementsOf(expected);
        for (int t = 0; t < workers; t++) {
            assertThat(done.get(t))
                    .allSatisfy(id -> assertThat(
                                    ledger.pendingHold(id).orElseThrow().state())
                            .isEqualTo(PendingHold.State.VOIDED));
        }
        long capturedSum = done.get(workers).stream()
                .mapToLong(id -> ledger.entry(id)
                        .orElseThrow()
                        .postings()
                        .get(0)
                        .amount()
                        .minorUnits())
                .sum();
        assertThat(ledger.balances(customer.id())).isEqualTo(new AccountBalance(usd(capturedSum), usd(1), usd(0)));
        try (Connection c = connection()) {
            assertThat(ledger.lockOpenHolds(c, clock.instant().plusSeconds(1), 100))
                    .hasSize(1);
            c.rollback();
        }
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void concurrentHoldsNeverReserveMoreThanTheFloorAllows() throws Exception {
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);
        long funded = 10_000;
        ledger.post(transfer(clearing, wallet, funded));
        int threads = 12;
        record Outcome(long spent, int refused) {}
        List<Outcome> outcomes = concurrently(threads, t -> () -> {
            long spent = 0;
            int refused = 0;
            Random random = new Random(t);
            try (Connection c = connection()) {
                for (int i = 0; i < 20; i++) {
                    long amount = 1L + random.nextInt(300);
                    try {
                        JournalEntry hold = ledger.hold(c, transfer(wallet, shop, amount));
                        c.commit();
                        switch (random.nextInt(3)) {
                            case 0 -> ledger.voidHold(c, hold.id(), null, "");
                            case 1 -> {
                                ledger.capture(c, hold.id(), null, "");
                                spent += amount;
                            }
                            default -> {
                                long part = 1L + random.nextInt((int) amount);
                                ledger.capture(c, hold.id(), usd(part), null, "");
                                spent += part;
                            }
                        }
                        c.commit();
                    } catch (BalanceFloorException e) {
                        c.rollback();
                        refused++;
                    }
                }
            }
            return new Outcome(spent, refused);
        });
        long spent = outcomes.stream().mapToLong(Outcome::spent).sum();
        assertThat(outcomes.stream().mapToInt(Outcome::refused).sum())
                .as("holds exceeded the funds at times")
                .isPositive();
        assertThat(ledger.balances(wallet.id())).isEqualTo(new AccountBalance(usd(funded - spent), usd(0), usd(0)));
        assertThat(ledger.balances(shop.id())).isEqualTo(new AccountBalance(usd(spent), usd(0), usd(0)));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }
}
