package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Random sequences of charges, spends, holds, captures (full and partial) and voids from several writer
 * threads, against a model of every account kept from the operations alone; meanwhile a reader takes
 * trial balances, each of which must balance (available and pending), whatever is in flight.
 */
class TrialBalancePropertyTest extends LedgerTestSupport {

    private static final long SEED = 20261201L;
    private static final int WRITERS = 4;
    private static final int OPERATIONS = 60;

    /** Expected normal-side available balance and pending amounts of each account, from one writer's commits. */
    private static final class Model {
        final Map<Long, long[]> accounts = new HashMap<>();

        long[] of(Account a) {
            return accounts.computeIfAbsent(a.id(), id -> new long[3]);
        }

        void post(Account a, Side side, long amount) {
            of(a)[0] += side == a.normalBalance() ? amount : -amount;
        }

        void pend(Account a, Side side, long amount) {
            of(a)[side == a.normalBalance() ? 1 : 2] += amount;
        }

        void release(Account a, Side side, long amount) {
            of(a)[side == a.normalBalance() ? 1 : 2] -= amount;
        }
    }

    /** An open hold of one writer: debit {@code from}, credit {@code to}. */
    private record Hold(JournalEntry entry, Account from, Account to, long amount) {}

    @Test
    void everyAccountMatchesTheModelAndEveryTrialBalanceBalances() throws Exception {
        Account clearing =
                open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(4));
        Account shop = open("shop", AccountType.REVENUE);
        List<Account> wallets = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            wallets.add(open(
                    AccountSpec.of("wallet:" + i, AccountType.LIABILITY, USD).withFloor(0)));
        }
        List<Account> all = new ArrayList<>(wallets);
        all.add(clearing);
        all.add(shop);

        AtomicInteger writersDone = new AtomicInteger();
        ConcurrentLinkedQueue<Instant> instants = new ConcurrentLinkedQueue<>();
        List<Object> results = concurrently(WRITERS + 1, t -> () -> {
            if (t == WRITERS) {
                return readTrialBalances(writersDone);
            }
            try {
                return write(new Random(SEED + t), clearing, shop, wallets, instants);
            } finally {
                writersDone.incrementAndGet();
            }
        });

        assertThat((Integer) results.get(WRITERS))
                .as("trial balances read while writing")
                .isPositive();
        Map<Long, long[]> expected = new HashMap<>();
        for (int t = 0; t < WRITERS; t++) {
            ((Model) results.get(t)).accounts.forEach((id, v) -> {
                long[] sum = expected.computeIfAbsent(id, k -> new long[3]);
                for (int i = 0; i < 3; i++) {
                    sum[i] += v[i];
                }
            });
        }
        Instant end = clock.instant();
        for (Account a : all) {
            long[] v = expected.getOrDefault(a.id(), new long[3]);
            AccountBalance balances = ledger.balances(a.id());
            assertThat(balances).as(a.code()).isEqualTo(new AccountBalance(usd(v[0]), usd(v[1]), usd(v[2])));
            assertThat(ledger.balances(a.id(), end))
                    .as("%s from the postings", a.code())
                    .isEqualTo(balances);
        }
        for (Account w : wallets) {
            assertThat(ledger.balances(w.id()).unreserved().isNegative()).isFalse();
        }
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
        assertThat(ledger.trialBalance(end).lines())
                .isEqualTo(ledger.trialBalance().lines());
        for (Instant at : instants) {
            assertThat(ledger.trialBalance(at).isBalanced()).as("as of %s", at).isTrue();
        }
    }

    private int readTrialBalances(AtomicInteger writersDone) {
        int reads = 0;
        while (writersDone.get() < WRITERS) {
            TrialBalance trial = ledger.trialBalance();
            assertThat(trial.isBalanced())
                    .as("trial balance %d: %s", reads, trial.totals())
                    .isTrue();
            reads++;
        }
        return reads;
    }

    private Model write(
            Random random,
            Account clearing,
            Account shop,
            List<Account> wallets,
            ConcurrentLinkedQueue<Instant> instants)
            throws Exception {
        Model model = new Model();
        List<Hold> open = new ArrayList<>();
        try (Connection c = connection()) {
            for (int i = 0; i < OPERATIONS; i++) {
                instants.add(clock.advance(Duration.ofMillis(1 + random.nextInt(5))));
                Account wallet = wallets.get(random.nextInt(wallets.size()));
                long amount = 1L + random.nextInt(2_000);
                boolean card = random.nextBoolean(); // a card payment into the wallet, or a spend from it
                Account from = card ? clearing : wallet;
                Account to = card ? wallet : shop;
                try {
                    switch (random.nextInt(5)) {
                        case 0 -> {
                            ledger.post(c, transfer(from, to, amount));
                            c.commit();
                            model.post(from, Side.DEBIT, amount);
                            model.post(to, Side.CREDIT, amount);
                        }
                        case 1, 2 -> {
                            JournalEntry hold = ledger.hold(c, transfer(from, to, amount));
                            c.commit();
                            model.pend(from, Side.DEBIT, amount);
                            model.pend(to, Side.CREDIT, amount);
                            open.add(new Hold(hold, from, to, amount));
                        }
                        case 3 -> {
                            if (!open.isEmpty()) {
                                Hold hold = open.remove(random.nextInt(open.size()));
                                long captured =
                                        random.nextBoolean() ? hold.amount() : 1 + random.nextInt((int) hold.amount());
                                ledger.capture(c, hold.entry().id(), usd(captured), null, "");
                                c.commit();
                                model.release(hold.from(), Side.DEBIT, hold.amount());
                                model.release(hold.to(), Side.CREDIT, hold.amount());
                                model.post(hold.from(), Side.DEBIT, captured);
                                model.post(hold.to(), Side.CREDIT, captured);
                            }
                        }
                        default -> {
                            if (!open.isEmpty()) {
                                Hold hold = open.remove(random.nextInt(open.size()));
                                ledger.voidHold(c, hold.entry().id(), null, "");
                                c.commit();
                                model.release(hold.from(), Side.DEBIT, hold.amount());
                                model.release(hold.to(), Side.CREDIT, hold.amount());
                            }
                        }
                    }
                } catch (BalanceFloorException refused) {
                    c.rollback(); // a spend beyond the wallet's unreserved funds: nothing changed
                }
            }
        }
        return model;
    }
}
