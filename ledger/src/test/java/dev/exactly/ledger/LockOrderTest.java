package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockOrderTest extends LedgerTestSupport {

    @Test
    void writersMovingMoneyBothWaysBetweenTwoAccountsNeverDeadlock() throws Exception {
        // both accounts have floors, so every entry locks both balance rows
        Account a = open(AccountSpec.of("a", AccountType.ASSET, USD).withFloor(-1_000_000));
        Account b = open(AccountSpec.of("b", AccountType.ASSET, USD).withFloor(-1_000_000));
        int threads = 8;
        int rounds = 40;
        List<Integer> done = concurrently(threads, t -> () -> {
            int posted = 0;
            try (Connection c = connection()) {
                for (int i = 0; i < rounds; i++) {
                    // even writers list a then b, odd writers list b then a: taken in request order, the
                    // row locks would cross and PostgreSQL would abort one side with a deadlock (40P01)
                    EntryRequest request = t % 2 == 0
                            ? EntryRequest.builder()
                                    .debit(a.id(), usd(1 + i))
                                    .credit(b.id(), usd(1 + i))
                                    .build()
                            : EntryRequest.builder()
                                    .debit(b.id(), usd(1 + i))
                                    .credit(a.id(), usd(1 + i))
                                    .build();
                    ledger.post(c, request);
                    c.commit();
                    posted++;
                }
            }
            return posted;
        });
        assertThat(done).containsOnly(rounds);
        assertThat(ledger.balance(a.id())).isEqualTo(usd(0));
        assertThat(ledger.balance(b.id())).isEqualTo(usd(0));
        assertThat(ledger.entries(EntryQuery.first(1000)).entries()).hasSize(threads * rounds);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }
}
