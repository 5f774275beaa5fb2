package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ReversalAndRefundTest extends LedgerTestSupport {

    private Account clearing;
    private Account customer;
    private JournalEntry charge;

    @BeforeEach
    void aCharge() {
        clearing = open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(4));
        customer = open(AccountSpec.of("customer", AccountType.LIABILITY, USD).withFloor(0));
        charge = ledger.post(EntryRequest.builder()
                .debit(clearing.id(), usd(10_000))
                .credit(customer.id(), usd(10_000))
                .externalRef("charge:1")
                .build());
    }

    @Test
    void aReversalMirrorsTheOriginalAndLinksToIt() {
        JournalEntry reversal = ledger.reverse(charge.id(), "reversal:1", "charge disputed");

        assertThat(reversal.kind()).isEqualTo(EntryKind.REVERSAL);
        assertThat(reversal.originalEntryId()).isEqualTo(charge.id());
        assertThat(reversal.postings())
                .extracting(Posting::accountId, Posting::side, Posting::amount)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(clearing.id(), Side.CREDIT, usd(10_000)),
                        org.assertj.core.groups.Tuple.tuple(customer.id(), Side.DEBIT, usd(10_000)));
        assertThat(ledger.linkedEntries(charge.id())).containsExactly(reversal);
        assertThat(ledger.entry(charge.id())).contains(charge); // the original is untouched
        assertThat(ledger.balance(clearing.id())).isEqualTo(usd(0));
        assertThat(ledger.balance(customer.id())).isEqualTo(usd(0));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void anEntryIsReversedAtMostOnce() {
        JournalEntry reversal = ledger.reverse(charge.id(), null, "first");
        assertThatThrownBy(() -> ledger.reverse(charge.id(), null, "second"))
                .isInstanceOfSatisfying(DuplicateEntryException.class, e -> {
                    assertThat(e.reason()).isEqualTo(DuplicateEntryException.Reason.ALREADY_REVERSED);
                    assertThat(e.code()).isEqualTo("ledger_already_reversed");
                    assertThat(e.existingEntryId()).isEqualTo(reversal.id());
                });
        assertThatThrownBy(() -> ledger.reverse(999_999, null, "nothing"))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.code()).isEqualTo("ledger_unknown_entry"));
        assertThatThrownBy(() -> ledger.post(new EntryRequest(
                        EntryKind.REVERSAL,
                        charge.id(),
                        null,
                        "",
                        reversal.postings().stream()
                                .map(p -> new PostingRequest(p.accountId(), p.side(), p.amount()))
                                .toList())))
                .isInstanceOf(LedgerValidationException.class);
    }

    @Test
    void racingReversalsOfOneEntryCommitOnce() throws Exception {
        int threads = 6;
        List<String> outcomes = concurrently(threads, t -> () -> {
            try (Connection c = connection()) {
                try {
                    ledger.reverse(c, charge.id(), null, "racer " + t);
                    c.commit();
                    return "reversed";
                } catch (DuplicateEntryException e) {
                    c.rollback();
                    return e.code();
                } catch (BalanceFloorException e) {
                    c.rollback();
                    return e.code();
                }
            }
        });
        assertThat(outcomes).filteredOn("reversed"::equals).hasSize(1);
        assertThat(outcomes).filteredOn("ledger_already_reversed"::equals).hasSize(threads - 1);
        assertThat(ledger.balance(customer.id())).isEqualTo(usd(0));
    }

    @Test
    void partialRefundsAreNewEntriesLinkedToTheCharge() {
        JournalEntry first = ledger.post(EntryRequest.refundOf(charge.id())
                .debit(customer.id(), usd(2_500))
                .credit(clearing.id(), usd(2_500))
                .externalRef("refund:1")
                .description("partial refund")
                .build());
        clock.advance(java.time.Duration.ofMinutes(5));
        JournalEntry second = ledger.post(EntryRequest.refundOf(charge.id())
                .debit(customer.id(), usd(1_000))
                .credit(clearing.id(), usd(1_000))
                .externalRef("refund:2")
                .build());

        assertThat(first.kind()).isEqualTo(EntryKind.REFUND);
        assertThat(ledger.linkedEntries(charge.id())).containsExactly(first, second);
        assertThat(ledger.balance(customer.id())).isEqualTo(usd(6_500));
        // refunding more than is left would take the customer below its floor
        assertThatThrownBy(() -> ledger.post(EntryRequest.refundOf(charge.id())
                        .debit(customer.id(), usd(6_501))
                        .credit(clearing.id(), usd(6_501))
                        .build()))
                .isInstanceOf(BalanceFloorException.class);
        // a reversal after partial refunds would also cross the floor
        assertThatThrownBy(() -> ledger.reverse(charge.id(), null, "too late"))
                .isInstanceOf(BalanceFloorException.class);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }
}
