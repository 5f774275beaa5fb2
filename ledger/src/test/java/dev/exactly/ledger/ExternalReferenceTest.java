package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Writes are idempotent by external reference: the same entry again is returned, a different one refused. */
class ExternalReferenceTest extends LedgerTestSupport {

    private Account cash;
    private Account revenue;

    @BeforeEach
    void accounts() {
        cash = open("cash", AccountType.ASSET);
        revenue = open("revenue", AccountType.REVENUE);
    }

    private EntryRequest charge(String ref, long cents) {
        return EntryRequest.builder()
                .debit(cash.id(), usd(cents))
                .credit(revenue.id(), usd(cents))
                .externalRef(ref)
                .build();
    }

    @Test
    void aWritePreparedBeforeAConnectionReadsNothingOnceTheLedgerKnowsItsAccounts() throws Exception {
        AtomicInteger borrowed = new AtomicInteger();
        DataSource counting = (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        borrowed.incrementAndGet();
                    }
                    try {
                        return method.invoke(dataSource, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        Ledger fresh = Ledger.of(counting, clock);
        int before = borrowed.get();
        // this ledger has not read the accounts yet: they are read on a pooled connection
        List<EntryWrite> writes = new java.util.ArrayList<>();
        writes.add(fresh.preparePost(charge("charge:ch_k1", 100)));
        assertThat(borrowed.get() - before).isEqualTo(1);
        // now it knows them: neither a post nor a hold takes a connection to be prepared
        writes.add(fresh.preparePost(charge("charge:ch_k2", 200)));
        writes.add(fresh.prepareHold(charge("auth:ch_k3", 400)));
        assertThat(borrowed.get() - before).isEqualTo(1);
        // an entry that names an original one is read on a connection all the same
        JournalEntry refunded = ledger.post(charge("charge:ch_k4", 50));
        EntryRequest refund = EntryRequest.refundOf(refunded.id())
                .debit(revenue.id(), usd(50))
                .credit(cash.id(), usd(50))
                .externalRef("refund:ch_k4")
                .build();
        fresh.preparePost(refund);
        assertThat(borrowed.get() - before).isEqualTo(2);

        try (Connection c = connection()) {
            for (EntryWrite write : writes) {
                try (PreparedStatement s = c.prepareStatement(write.sql())) {
                    write.bind(s, 1);
                    s.execute();
                    assertThat(write.result(s).externalRef()).isNotNull();
                }
            }
            c.commit();
        }
        assertThat(ledger.entryByExternalRef("charge:ch_k2")).isPresent();
        assertThat(ledger.entryByExternalRef("auth:ch_k3").orElseThrow().kind()).isEqualTo(EntryKind.PENDING);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(350));
    }

    @Test
    void theSameEntryAgainReturnsTheExistingOneAndPostsNothing() {
        JournalEntry first = ledger.post(charge("charge:ch_1", 100));
        clock.advance(Duration.ofMinutes(1));
        // the same postings in another order and with another description are the same business event
        JournalEntry again = ledger.post(EntryRequest.builder()
                .credit(revenue.id(), usd(100))
                .debit(cash.id(), usd(100))
                .externalRef("charge:ch_1")
                .description("retried")
                .build());

        assertThat(again).isEqualTo(first);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(100));
        assertThat(ledger.entries(EntryQuery.first(10)).entries()).containsExactly(first);
    }

    @Test
    void aPreparedWriteSentWithOtherStatementsPostsOnceAndReturnsTheExistingEntryAfterwards() throws Exception {
        JournalEntry written;
        try (Connection c = connection()) {
            EntryWrite write = ledger.preparePost(c, charge("charge:ch_2", 250));
            try (PreparedStatement s = c.prepareStatement(write.sql() + ";\nSELECT ?::text AS echoed")) {
                int next = write.bind(s, 1);
                s.setString(next, "after the entry");
                s.execute();
                written = write.result(s);
                s.getMoreResults();
                try (ResultSet rs = s.getResultSet()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("after the entry");
                }
            }
            c.commit();
        }
        assertThat(ledger.entryByExternalRef("charge:ch_2")).contains(written);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(250));
        try (Connection c = connection()) {
            EntryWrite again = ledger.preparePost(c, charge("charge:ch_2", 250));
            try (PreparedStatement s = c.prepareStatement(again.sql())) {
                again.bind(s, 1);
                s.execute();
                assertThat(again.result(s)).isEqualTo(written);
            }
            EntryWrite different = ledger.preparePost(c, charge("charge:ch_2", 999));
            try (PreparedStatement s = c.prepareStatement(different.sql())) {
                different.bind(s, 1);
                s.execute();
                assertThatThrownBy(() -> different.result(s)).isInstanceOf(LedgerConflictException.class);
            }
            c.commit();
        }
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(250));
    }

    @Test
    void aDifferentEntryWithTheReferenceIsAConflictAndTheTransactionStaysUsable() throws Exception {
        Account other = open("other", AccountType.REVENUE);
        JournalEntry first = ledger.post(charge("charge:ch_1", 100));
        List<EntryRequest> different = List.of(
                charge("charge:ch_1", 999), // amount
                EntryRequest.builder()
                        .debit(cash.id(), usd(100))
                        .credit(other.id(), usd(100))
                        .externalRef("charge:ch_1")
                        .build(), // account
                EntryRequest.builder()
                        .debit(revenue.id(), usd(100))
                        .credit(cash.id(), usd(100))
                        .externalRef("charge:ch_1")
                        .build(), // direction
                EntryRequest.adjustmentOf(first.id())
                        .debit(cash.id(), usd(100))
                        .credit(revenue.id(), usd(100))
                        .externalRef("charge:ch_1")
                        .build(), // kind and link
                EntryRequest.builder()
                        .debit(cash.id(), usd(60))
                        .debit(cash.id(), usd(40))
                        .credit(revenue.id(), usd(100))
                        .externalRef("charge:ch_1")
                        .build()); // lines
        try (Connection c = connection()) {
            for (EntryRequest request : different) {
                assertThatThrownBy(() -> ledger.post(c, request))
                        .isInstanceOfSatisfying(LedgerConflictException.class, e -> {
                            assertThat(e.code()).isEqualTo("ledger_reference_conflict");
                            assertThat(e.externalRef()).isEqualTo("charge:ch_1");
                            assertThat(e.existingEntryId()).isEqualTo(first.id());
                            assertThat(e.existing()).isEqualTo(first);
                            assertThat(e.getMessage()).contains("charge:ch_1");
                        });
            }
            // nothing failed in the database: the caller can read the original and carry on
            assertThat(ledger.entryByExternalRef(c, "charge:ch_1")).contains(first);
            ledger.post(c, transfer(cash, revenue, 1));
            c.commit();
        }
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(101));
    }

    @Test
    void inTheCallersTransactionARepeatSeesTheUncommittedEntryAndNothingIsCommitted() throws Exception {
        try (Connection c = connection()) {
            JournalEntry first = ledger.post(c, charge("charge:ch_2", 500));
            assertThat(ledger.post(c, charge("charge:ch_2", 500))).isEqualTo(first);
            assertThatThrownBy(() -> ledger.post(c, charge("charge:ch_2", 501)))
                    .isInstanceOf(LedgerConflictException.class);
            assertThat(ledger.entryByExternalRef("charge:ch_2"))
                    .as("not committed by the ledger")
                    .isEmpty();
            c.rollback();
        }
        assertThat(ledger.entryByExternalRef("charge:ch_2")).isEmpty();
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(0));
    }

    @Test
    void aRetriedReversalWithItsReferenceReturnsTheReversal() {
        JournalEntry charge = ledger.post(charge("charge:ch_3", 700));
        JournalEntry reversal = ledger.reverse(charge.id(), "reversal:ch_3", "disputed");
        assertThat(ledger.reverse(charge.id(), "reversal:ch_3", "disputed again"))
                .isEqualTo(reversal);
        // the reference of the charge is not a reversal of it
        assertThatThrownBy(() -> ledger.reverse(charge.id(), "charge:ch_3", ""))
                .isInstanceOf(LedgerConflictException.class);
        assertThatThrownBy(() -> ledger.reverse(charge.id(), "reversal:other", ""))
                .isInstanceOfSatisfying(
                        DuplicateEntryException.class,
                        e -> assertThat(e.existingEntryId()).isEqualTo(reversal.id()));
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(0));
    }

    @Test
    void ofRacingWritersOfTheSameEntryOneWritesAndAllGetItsEntry() throws Exception {
        int threads = 8;
        for (int round = 0; round < 5; round++) {
            String ref = "charge:race:" + round;
            boolean ownTransaction = round % 2 == 0;
            List<JournalEntry> results = concurrently(threads, t -> () -> {
                if (ownTransaction) {
                    return ledger.post(charge(ref, 100));
                }
                try (Connection c = connection()) {
                    JournalEntry e = ledger.post(c, charge(ref, 100));
                    c.commit();
                    return e;
                }
            });
            JournalEntry stored = ledger.entryByExternalRef(ref).orElseThrow();
            assertThat(results).as("round %d", round).containsOnly(stored);
        }
        assertThat(ledger.entries(EntryQuery.first(100)).entries()).hasSize(5);
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(500));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void ofRacingWritersOfDifferentEntriesOneWritesAndTheOthersGetTheConflict() throws Exception {
        int threads = 8;
        for (int round = 0; round < 5; round++) {
            String ref = "charge:mixed:" + round;
            // even threads want 100, odd ones 200: whichever commits first decides
            List<Object> results = concurrently(threads, t -> () -> {
                try (Connection c = connection()) {
                    try {
                        JournalEntry e = ledger.post(c, charge(ref, t % 2 == 0 ? 100 : 200));
                        c.commit();
                        return e;
                    } catch (LedgerConflictException e) {
                        c.rollback();
                        return e;
                    }
                }
            });
            JournalEntry stored = ledger.entryByExternalRef(ref).orElseThrow();
            long winner = stored.postings().get(0).amount().minorUnits();
            for (int t = 0; t < threads; t++) {
                if ((t % 2 == 0 ? 100 : 200) == winner) {
                    assertThat(results.get(t))
                            .as("round %d thread %d", round, t)
                            .isEqualTo(stored);
                } else {
                    assertThat(results.get(t))
                            .isInstanceOfSatisfying(
                                    LedgerConflictException.class,
                                    e -> assertThat(e.existing()).isEqualTo(stored));
                }
            }
        }
        assertThat(ledger.entries(EntryQuery.first(100)).entries()).hasSize(5);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void aWriterWaitingOnAReferenceWritesItWhenTheFirstWriterRollsBack() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection first = connection();
                Connection second = connection()) {
            ledger.post(first, charge("charge:ch_4", 100));
            int pid = backendPid(second);
            CompletableFuture<JournalEntry> waiting = CompletableFuture.supplyAsync(
                    () -> {
                        JournalEntry e = ledger.post(second, charge("charge:ch_4", 300));
                        try {
                            second.commit();
                        } catch (java.sql.SQLException ex) {
                            throw new IllegalStateException(ex);
                        }
                        return e;
                    },
                    pool);
            await().atMost(Duration.ofSeconds(10)).until(() -> waitsOnLock(pid));
            assertThat(waiting).isNotDone();
            first.rollback();
            JournalEntry written = waiting.get(10, TimeUnit.SECONDS);
            assertThat(written.postings().get(0).amount()).isEqualTo(usd(300));
            assertThat(ledger.entryByExternalRef("charge:ch_4")).contains(written);
        } finally {
            pool.shutdownNow();
        }
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(300));
    }
}
