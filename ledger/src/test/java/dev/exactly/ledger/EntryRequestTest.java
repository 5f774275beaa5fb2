package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class EntryRequestTest {

    private static final Money USD_100 = Money.of(100, "USD");

    private static void assertRefused(ThrowingCallable call, String code) {
        assertThatThrownBy(call)
                .isInstanceOf(LedgerValidationException.class)
                .extracting(e -> ((LedgerException) e).code())
                .isEqualTo(code);
    }

    @Test
    void aBalancedEntryIsAccepted() {
        EntryRequest request = EntryRequest.builder()
                .debit(1, USD_100)
                .credit(2, USD_100)
                .externalRef("charge:1")
                .description("charge")
                .build();
        assertThat(request.kind()).isEqualTo(EntryKind.STANDARD);
        assertThat(request.postings()).hasSize(2);
    }

    @Test
    void oneOrNoPostingIsRefused() {
        assertRefused(() -> EntryRequest.builder().debit(1, USD_100).build(), "ledger_too_few_postings");
        assertRefused(() -> EntryRequest.builder().build(), "ledger_too_few_postings");
    }

    @Test
    void anUnbalancedEntryIsRefused() {
        assertRefused(
                () -> EntryRequest.builder()
                        .debit(1, USD_100)
                        .credit(2, Money.of(99, "USD"))
                        .build(),
                "ledger_unbalanced");
    }

    @Test
    void balanceIsPerCurrency() {
        // 1.00 USD against 1.00 EUR: equal numbers, different money
        assertRefused(
                () -> EntryRequest.builder()
                        .debit(1, USD_100)
                        .credit(2, Money.of(100, "EUR"))
                        .build(),
                "ledger_unbalanced");
        EntryRequest fx = EntryRequest.builder()
                .debit(1, USD_100)
                .credit(2, USD_100)
                .debit(3, Money.of(92, "EUR"))
                .credit(4, Money.of(92, "EUR"))
                .build();
        assertThat(fx.postings()).hasSize(4);
    }

    @Test
    void sumsThatOverflowAreRefused() {
        Money max = Money.of(Long.MAX_VALUE, "USD");
        assertRefused(
                () -> EntryRequest.builder()
                        .debit(1, max)
                        .debit(1, max)
                        .credit(2, max)
                        .credit(2, max)
                        .build(),
                "ledger_amount_overflow");
    }

    @Test
    void kindsAndLinksMustAgree() {
        List<PostingRequest> lines = List.of(PostingRequest.debit(1, USD_100), PostingRequest.credit(2, USD_100));
        assertRefused(() -> new EntryRequest(EntryKind.REFUND, null, null, "", lines), "ledger_invalid_entry");
        assertRefused(() -> new EntryRequest(EntryKind.STANDARD, 7L, null, "", lines), "ledger_invalid_entry");
        assertRefused(() -> new EntryRequest(EntryKind.STANDARD, null, "", "", lines), "ledger_invalid_entry");
        assertRefused(
                () -> new EntryRequest(EntryKind.STANDARD, null, "x".repeat(256), "", lines), "ledger_invalid_entry");
        assertThat(EntryRequest.refundOf(7)
                        .debit(2, USD_100)
                        .credit(1, USD_100)
                        .build()
                        .originalEntryId())
                .isEqualTo(7L);
        assertThat(new EntryRequest(EntryKind.ADJUSTMENT, null, null, "", lines).originalEntryId())
                .isNull();
    }
}
