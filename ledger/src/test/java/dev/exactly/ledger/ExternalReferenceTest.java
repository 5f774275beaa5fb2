package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExternalReferenceTest extends LedgerTestSupport {

    @Test
    void aSecondEntryWithTheSameReferenceIsRefusedAndTheTransactionStaysUsable() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account revenue = open("revenue", AccountType.REVENUE);
        JournalEntry first = ledger.post(EntryRequest.builder()
                .debit(cash.id(), usd(100)).credit(revenue.id(), usd(100)).externalRef("charge:ch_1").build());
        try (Connection c = connection()) {
            assertThatThrownBy(() -> ledger.post(c, EntryRequest.builder()
                            .debit(cash.id(), usd(999)).credit(revenue.id(), usd(999)).externalRef("charge:ch_1").build()))
                    .isInstanceOfSatisfying(DuplicateEntryException.class, e -> {
                        assertThat(e.code()).isEqualTo("ledger_duplicate_entry");
                        assertThat(e.existingEntryId()).isEqualTo(first.id());
                    });
            // nothing failed in the database: the caller can read the original and carry on
            assertThat(ledger.entryByExternalRef(c, "charge:ch_1")).contains(first);
            ledger.post(c, transfer(cash, revenue, 1));
            c.commit();
        }
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(101));
    }

    @Test
    void ofRacingWritersWithOneReferenceExactlyOneCommits() throws Exception {
        Account cash = open("cash", AccountType.ASSET);
        Account revenue = open("revenue", AccountType.REVENUE);
        int threads = 8;
        for (int round = 0; round < 5; round++) {
            String ref = "charge:race:" + round;
            List<Long> outcomes = concurrently(threads, t -> () -> {
                try (Connection c = connection()) {
                    try {
                        JournalEntry e = ledger.post(c, EntryRequest.builder()
                                .debit(cash.id(), usd(100)).credit(revenue.id(), usd(100)).externalRef(ref).build());
                        c.commit();
                        return e.id();
                    } catch (DuplicateEntryException e) {
                        c.rollback();
                        return -e.existingEntryId();
                    }
                }
            });
            List<Long> winners = outcomes.stream().filter(id -> id > 0).toList();
            assertThat(winners).as("round %d", round).hasSize(1);
            assertThat(outcomes.stream().filter(id -> id < 0)).containsOnly(-winners.get(0));
            assertThat(ledger.entryByExternalRef(ref).orElseThrow().id()).isEqualTo(winners.get(0));
        }
        assertThat(ledger.balance(cash.id())).isEqualTo(usd(500));
    }
}
