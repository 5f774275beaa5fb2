package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ShardedAccountTest extends LedgerTestSupport {

    private static final String SHARDS = """
            SELECT shard, balance FROM ledger_balance WHERE account_id = ? ORDER BY shard
            """;

    private Map<Integer, Long> shards(long accountId) throws SQLException {
        Map<Integer, Long> shards = new HashMap<>();
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(SHARDS)) {
            ps.setLong(1, accountId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    shards.put(rs.getInt(1), rs.getLong(2));
                }
            }
        }
        return shards;
    }

    @Test
    void aShardedAccountsBalanceIsTheSumOfItsShards() throws Exception {
        Account clearing =
                open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(8));
        int threads = 8;
        int perThread = 25;
        AtomicInteger customers = new AtomicInteger();
        List<Long> charged = concurrently(threads, t -> () -> {
            Account customer = open("customer:" + customers.incrementAndGet(), AccountType.LIABILITY);
            long total = 0;
            try (Connection c = connection()) {
                for (int i = 0; i < perThread; i++) {
                    long amount = 100L + t * 10L + i;
                    ledger.post(c, transfer(clearing, customer, amount));
                    c.commit();
                    total += amount;
                }
            }
            return total;
        });
        long total = charged.stream().mapToLong(Long::longValue).sum();

        Map<Integer, Long> shards = shards(clearing.id());
        assertThat(shards).hasSize(8);
        assertThat(shards.values().stream().filter(v -> v != 0))
                .as("entries spread over the shards")
                .hasSizeGreaterThan(4);
        assertThat(shards.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
        assertThat(ledger.balance(clearing.id())).isEqualTo(usd(total));
        assertThat(ledger.balance(clearing.id(), clock.instant())).isEqualTo(usd(total));
        TrialBalance trial = ledger.trialBalance();
        assertThat(trial.isBalanced()).isTrue();
        assertThat(trial.line(clearing.id()).orElseThrow().debit()).isEqualTo(usd(total));
        assertThat(trial.totals().get("USD").credits()).isEqualTo(usd(total));
    }

    @Test
    void onAHotAccountASecondChargeWaitsForTheFirstToCommit() throws Exception {
        Account hot = open(AccountSpec.of("clearing:hot", AccountType.ASSET, USD));
        assertThat(nextChargeWaits(hot, 1)).isTrue();
    }

    @Test
    void onAShardedAccountASecondChargeDoesNotWait() throws Exception {
        Account spread =
                open(AccountSpec.of("clearing:spread", AccountType.ASSET, USD).withShards(16));
        assertThat(nextChargeWaits(spread, 1)).isFalse();
    }

    @Test
    void aChargeWaitsOnlyWhenEveryShardIsHeld() throws Exception {
        Account spread =
                open(AccountSpec.of("clearing:spread", AccountType.ASSET, USD).withShards(3));
        assertThat(nextChargeWaits(spread, 2)).isFalse();
        assertThat(nextChargeWaits(spread, 3)).isTrue();
    }

    /**
     * Holds {@code held} charges uncommitted and posts one more (each to its own customer) from another
     * connection: does that one block on a row lock? Commits everything afterwards.
     */
    private boolean nextChargeWaits(Account clearing, int held) throws Exception {
        long before = ledger.balance(clearing.id()).minorUnits();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        List<Connection> holders = new java.util.ArrayList<>();
        try (Connection next = connection()) {
            for (int i = 0; i < held; i++) {
                Connection holder = connection();
                holders.add(holder);
                ledger.post(holder, transfer(clearing, open("holder:" + held + ":" + i, AccountType.LIABILITY), 100));
            }
            Account customer = open("next:" + held, AccountType.LIABILITY);
            int pid = backendPid(next);
            CompletableFuture<JournalEntry> charge = CompletableFuture.supplyAsync(
                    () -> {
                        JournalEntry e = ledger.post(next, transfer(clearing, customer, 200));
                        try {
                            next.commit();
                        } catch (SQLException ex) {
                            throw new IllegalStateException(ex);
                        }
                        return e;
                    },
                    pool);
            boolean waited;
            try {
                await().atMost(Duration.ofSeconds(10)).until(() -> charge.isDone() || waitsOnLock(pid));
                waited = !charge.isDone();
            } finally {
                for (Connection holder : holders) {
                    holder.commit();
                    holder.close();
                }
            }
            charge.get(10, TimeUnit.SECONDS);
            assertThat(ledger.balance(clearing.id())).isEqualTo(usd(before + 100L * held + 200));
            return waited;
        } finally {
            pool.shutdownNow();
        }
    }
}
