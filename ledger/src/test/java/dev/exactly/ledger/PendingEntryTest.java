package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Two-phase entries: a hold reserves, then a capture (full or partial) or a void resolves it once. */
class PendingEntryTest extends LedgerTestSupport {

    private Account clearing;
    private Account customer;

    @BeforeEach
    void accounts() {
        clearing = open(AccountSpec.of("clearing", AccountType.ASSET, USD).withShards(4));
        customer = open(AccountSpec.of("customer", AccountType.LIABILITY, USD).withFloor(0));
    }

    /** An authorization: debit clearing, credit the customer, pending. */
    private JournalEntry authorize(long cents, String ref) {
        return ledger.hold(EntryRequest.builder()
                .debit(clearing.id(), usd(cents))
                .credit(customer.id(), usd(cents))
                .externalRef(ref)
                .build());
    }

    private static AccountBalance balances(long available, long increase, long decrease) {
        return new AccountBalance(usd(available), usd(increase), usd(decrease));
    }

    @Test
    void aHoldReservesOnBothSidesWithoutTouchingTheAvailableBalances() {
        JournalEntry hold = authorize(10_000, "auth:ch_1");

        assertThat(hold.kind()).isEqualTo(EntryKind.PENDING);
        assertThat(hold.originalEntryId()).isNull();
        assertThat(hold.postings())
                .extracting(Posting::accountId, Posting::side, Posting::amount, Posting::pending)
                .containsExactly(
                        tuple(clearing.id(), Side.DEBIT, usd(10_000), true),
                        tuple(customer.id(), Side.CREDIT, usd(10_000), true));
        assertThat(ledger.entry(hold.id())).contains(hold);
        assertThat(ledger.balance(customer.id())).isEqualTo(usd(0));
        assertThat(ledger.balance(clearing.id())).isEqualTo(usd(0));
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(0, 10_000, 0));
        assertThat(ledger.balances(clearing.id())).isEqualTo(balances(0, 10_000, 0));
        assertThat(ledger.balances(customer.id()).pending()).isEqualTo(usd(10_000));
        assertThat(ledger.pendingHold(hold.id()).orElseThrow().state()).isEqualTo(PendingHold.State.OPEN);

        TrialBalance trial = ledger.trialBalance();
        assertThat(trial.isBalanced()).isTrue();
        assertThat(trial.totals().get("USD"))
                .isEqualTo(new TrialBalance.Totals(usd(0), usd(0), usd(10_000), usd(10_000)));
        assertThat(trial.line(customer.id()).orElseThrow().pendingCredit()).isEqualTo(usd(10_000));
        assertThat(trial.line(clearing.id()).orElseThrow().pendingDebit()).isEqualTo(usd(10_000));
    }

    @Test
    void aFullCapturePostsWhatWasHeldAndReleasesIt() {
        JournalEntry hold = authorize(10_000, "auth:ch_1");
        JournalEntry capture = ledger.capture(hold.id(), "capture:ch_1", "capture ch_1");

        assertThat(capture.kind()).isEqualTo(EntryKind.CAPTURE);
        assertThat(capture.originalEntryId()).isEqualTo(hold.id());
        assertThat(capture.postings())
                .extracting(Posting::accountId, Posting::side, Posting::amount, Posting::pending)
                .containsExactly(
                        tuple(clearing.id(), Side.DEBIT, usd(10_000), false),
                        tuple(customer.id(), Side.CREDIT, usd(10_000), false),
                        tuple(clearing.id(), Side.CREDIT, usd(10_000), true),
                        tuple(customer.id(), Side.DEBIT, usd(10_000), true));
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(10_000, 0, 0));
        assertThat(ledger.balances(clearing.id())).isEqualTo(balances(10_000, 0, 0));
        PendingHold state = ledger.pendingHold(hold.id()).orElseThrow();
        assertThat(state.state()).isEqualTo(PendingHold.State.CAPTURED);
        assertThat(state.resolution()).isEqualTo(capture);
        assertThat(ledger.linkedEntries(hold.id())).containsExactly(capture);
        assertThat(ledger.entry(hold.id())).contains(hold); // the hold itself never changes
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void aPartialCapturePostsTheCapturedAmountAndReleasesTheRest() {
        JournalEntry hold = authorize(10_000, "auth:ch_1");
        JournalEntry capture = ledger.capture(hold.id(), usd(6_000), "capture:ch_1", "");

        assertThat(capture.postings())
                .filteredOn(p -> !p.pending())
                .extracting(Posting::accountId, Posting::side, Posting::amount)
                .containsExactly(
                        tuple(clearing.id(), Side.DEBIT, usd(6_000)), tuple(customer.id(), Side.CREDIT, usd(6_000)));
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(6_000, 0, 0));
        assertThat(ledger.balances(clearing.id())).isEqualTo(balances(6_000, 0, 0));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
        // what was captured can be refunded like any charge; what was released is gone
        ledger.post(EntryRequest.refundOf(capture.id())
                .debit(customer.id(), usd(6_000))
                .credit(clearing.id(), usd(6_000))
                .build());
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(0, 0, 0));
    }

    @Test
    void aVoidReleasesEverythingAndPostsNothing() {
        JournalEntry hold = authorize(10_000, "auth:ch_1");
        JournalEntry voided = ledger.voidHold(hold.id(), "void:ch_1", "authorization expired");

        assertThat(voided.kind()).isEqualTo(EntryKind.VOID);
        assertThat(voided.postings()).allMatch(Posting::pending).hasSize(2);
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(0, 0, 0));
        assertThat(ledger.balances(clearing.id())).isEqualTo(balances(0, 0, 0));
        assertThat(ledger.pendingHold(hold.id()).orElseThrow().state()).isEqualTo(PendingHold.State.VOIDED);
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void aHoldIsResolvedOnceNeverBothAndARetryWithItsReferenceGetsTheResolution() {
        JournalEntry captured = authorize(500, "auth:1");
        JournalEntry capture = ledger.capture(captured.id(), usd(400), "capture:1", "");
        assertThat(ledger.capture(captured.id(), usd(400), "capture:1", "retried"))
                .isEqualTo(capture);
        assertThatThrownBy(() -> ledger.capture(captured.id(), usd(300), "capture:1", ""))
                .isInstanceOfSatisfying(
                        LedgerConflictException.class,
                        e -> assertThat(e.existingEntryId()).isEqualTo(capture.id()));
        for (Runnable second : List.<Runnable>of(
                () -> ledger.capture(captured.id(), null, ""),
                () -> ledger.capture(captured.id(), usd(400), "capture:again", ""),
                () -> ledger.voidHold(captured.id(), "void:1", ""))) {
            assertThatThrownBy(second::run).isInstanceOfSatisfying(DuplicateEntryException.class, e -> {
                assertThat(e.reason()).isEqualTo(DuplicateEntryException.Reason.ALREADY_CAPTURED);
                assertThat(e.code()).isEqualTo("ledger_already_captured");
                assertThat(e.existingEntryId()).isEqualTo(capture.id());
            });
        }

        JournalEntry voided = authorize(500, "auth:2");
        JournalEntry voidEntry = ledger.voidHold(voided.id(), null, "");
        for (Runnable second : List.<Runnable>of(
                () -> ledger.capture(voided.id(), null, ""), () -> ledger.voidHold(voided.id(), null, ""))) {
            assertThatThrownBy(second::run).isInstanceOfSatisfying(DuplicateEntryException.class, e -> {
                assertThat(e.reason()).isEqualTo(DuplicateEntryException.Reason.ALREADY_VOIDED);
                assertThat(e.existingEntryId()).isEqualTo(voidEntry.id());
            });
        }
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(400, 0, 0));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void inTheCallersTransactionNothingIsCommittedAndARefusalLeavesTheTransactionUsable() throws Exception {
        JournalEntry hold = authorize(900, "auth:1");
        try (Connection c = connection()) {
            JournalEntry voided = ledger.voidHold(c, hold.id(), "void:1", "");
            assertThat(ledger.pendingHold(c, hold.id()).orElseThrow().resolution())
                    .isEqualTo(voided);
            assertThat(ledger.pendingHold(hold.id()).orElseThrow().state())
                    .as("not committed")
                    .isEqualTo(PendingHold.State.OPEN);
            assertThatThrownBy(() -> ledger.capture(c, hold.id(), "capture:1", ""))
                    .isInstanceOf(DuplicateEntryException.class);
            c.rollback();
            assertThat(ledger.pendingHold(hold.id()).orElseThrow().state()).isEqualTo(PendingHold.State.OPEN);
            ledger.capture(c, hold.id(), usd(100), "capture:1", "");
            assertThatThrownBy(() -> ledger.voidHold(c, hold.id(), null, ""))
                    .isInstanceOf(DuplicateEntryException.class);
            ledger.post(c, transfer(clearing, customer, 1)); // still usable
            c.commit();
        }
        assertThat(ledger.pendingHold(hold.id()).orElseThrow().state()).isEqualTo(PendingHold.State.CAPTURED);
        assertThat(ledger.balances(customer.id())).isEqualTo(balances(101, 0, 0));
    }

    @Test
    void capturesAreCheckedAgainstTheHold() {
        Account merchant = open("merchant", AccountType.LIABILITY);
        Account fees = open("fees", AccountType.REVENUE);
        JournalEntry hold = authorize(1_000, "auth:1");
        JournalEntry standard = ledger.post(transfer(clearing, customer, 5));

        assertThatThrownBy(() -> ledger.capture(hold.id(), usd(1_001), null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_AMOUNT));
        assertThatThrownBy(() -> ledger.capture(hold.id(), Money.of(100, EUR), null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.CURRENCY_MISMATCH));
        assertThatThrownBy(() -> ledger.capture(
                        hold.id(),
                        List.of(
                                PostingRequest.debit(clearing.id(), usd(10)),
                                PostingRequest.credit(merchant.id(), usd(10))),
                        null,
                        ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.capture(standard.id(), null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.voidHold(987_654, null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_ENTRY));
        assertThatThrownBy(() -> ledger.reverse(hold.id(), null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.post(EntryRequest.refundOf(hold.id())
                        .debit(customer.id(), usd(1))
                        .credit(clearing.id(), usd(1))
                        .build()))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.post(new EntryRequest(
                        EntryKind.PENDING,
                        null,
                        null,
                        "",
                        List.of(
                                PostingRequest.debit(clearing.id(), usd(1)),
                                PostingRequest.credit(customer.id(), usd(1))))))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.pendingHold(standard.id()))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThat(ledger.pendingHold(987_654)).isEmpty();

        // a hold of several lines is captured by naming the postings, each at most what it holds
        JournalEntry split = ledger.hold(EntryRequest.builder()
                .debit(clearing.id(), usd(100))
                .credit(merchant.id(), usd(97))
                .credit(fees.id(), usd(3))
                .build());
        assertThatThrownBy(() -> ledger.capture(split.id(), usd(50), null, ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ENTRY));
        assertThatThrownBy(() -> ledger.capture(
                        split.id(),
                        List.of(
                                PostingRequest.debit(clearing.id(), usd(98)),
                                PostingRequest.credit(merchant.id(), usd(98))),
                        null,
                        ""))
                .isInstanceOfSatisfying(
                        LedgerValidationException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_AMOUNT));
        JournalEntry capture = ledger.capture(
                split.id(),
                List.of(
                        PostingRequest.debit(clearing.id(), usd(50)),
                        PostingRequest.credit(merchant.id(), usd(48)),
                        PostingRequest.credit(fees.id(), usd(2))),
                null,
                "");
        assertThat(ledger.balances(merchant.id())).isEqualTo(balances(48, 0, 0));
        assertThat(ledger.balances(fees.id())).isEqualTo(balances(2, 0, 0));

        // a capture is reversed like any entry: the mirror of what it posted (its releases stay)
        JournalEntry reversal = ledger.reverse(capture.id(), null, "");
        assertThat(reversal.postings()).hasSize(3).noneMatch(Posting::pending);
        assertThat(ledger.balances(merchant.id())).isEqualTo(balances(0, 0, 0));
        assertThat(ledger.balances(clearing.id())).isEqualTo(balances(5, 1_000, 0));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void aHoldReservesAgainstTheFloor() {
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);
        ledger.post(transfer(clearing, wallet, 100)); // the wallet owes its holder 1.00

        JournalEntry first = ledger.hold(transfer(wallet, shop, 70));
        assertThat(ledger.balances(wallet.id())).isEqualTo(balances(100, 0, 70));
        assertThat(ledger.balances(wallet.id()).unreserved()).isEqualTo(usd(30));
        assertThatThrownBy(() -> ledger.hold(transfer(wallet, shop, 31)))
                .isInstanceOfSatisfying(BalanceFloorException.class, e -> {
                    assertThat(e.balance()).isEqualTo(usd(30));
                    assertThat(e.change()).isEqualTo(usd(-31));
                });
        assertThatThrownBy(() -> ledger.post(transfer(wallet, shop, 31))).isInstanceOf(BalanceFloorException.class);
        JournalEntry second = ledger.hold(transfer(wallet, shop, 30));
        assertThat(ledger.balances(wallet.id()).unreserved()).isEqualTo(usd(0));

        ledger.capture(first.id(), usd(50), null, ""); // 50 spent, 20 released
        assertThat(ledger.balances(wallet.id())).isEqualTo(balances(50, 0, 30));
        ledger.voidHold(second.id(), null, "");
        assertThat(ledger.balances(wallet.id())).isEqualTo(balances(50, 0, 0));
        assertThat(ledger.balances(shop.id())).isEqualTo(balances(50, 0, 0));
        ledger.post(transfer(wallet, shop, 50));
        assertThat(ledger.trialBalance().isBalanced()).isTrue();
    }

    @Test
    void balancesAndTrialBalancesAsOfATimeSeeHoldsAsTheyWere() {
        Instant t1 = clock.advance(Duration.ofMinutes(1));
        JournalEntry hold = authorize(10_000, "auth:1");
        Instant t2 = clock.advance(Duration.ofMinutes(1));
        ledger.capture(hold.id(), usd(6_000), "capture:1", "");
        Instant t3 = clock.advance(Duration.ofMinutes(1));
        JournalEntry open = authorize(300, "auth:2");

        assertThat(ledger.balances(customer.id(), START)).isEqualTo(balances(0, 0, 0));
        assertThat(ledger.balances(customer.id(), t1)).isEqualTo(balances(0, 10_000, 0));
        assertThat(ledger.balance(customer.id(), t1)).isEqualTo(usd(0));
        assertThat(ledger.balances(customer.id(), t2)).isEqualTo(balances(6_000, 0, 0));
        assertThat(ledger.balances(clearing.id(), t3)).isEqualTo(balances(6_000, 300, 0));
        assertThat(ledger.balances(customer.id(), t3)).isEqualTo(ledger.balances(customer.id()));

        TrialBalance atT1 = ledger.trialBalance(t1);
        assertThat(atT1.isBalanced()).isTrue();
        assertThat(atT1.line(customer.id()).orElseThrow().pending()).isEqualTo(usd(10_000));
        assertThat(atT1.line(customer.id()).orElseThrow().balance()).isEqualTo(usd(0));
        assertThat(ledger.trialBalance(t2).isBalanced()).isTrue();
        assertThat(ledger.trialBalance(t3).lines())
                .isEqualTo(ledger.trialBalance().lines());

        // a hold on the other side: a wallet spending, pending against its normal side
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        ledger.post(transfer(clearing, wallet, 1_000));
        ledger.hold(transfer(wallet, customer, 400));
        Instant t4 = clock.advance(Duration.ofMinutes(1));
        assertThat(ledger.balances(wallet.id(), t4))
                .isEqualTo(balances(1_000, 0, 400))
                .isEqualTo(ledger.balances(wallet.id()));
        assertThat(ledger.pendingHold(open.id()).orElseThrow().state()).isEqualTo(PendingHold.State.OPEN);
    }

    @Test
    void openHoldsAreListedOldestFirstLockedAndSkippedByOtherWorkers() throws Exception {
        JournalEntry h0 = authorize(100, "auth:0");
        clock.advance(Duration.ofMinutes(1));
        JournalEntry h1 = authorize(100, "auth:1");
        clock.advance(Duration.ofMinutes(1));
        JournalEntry h2 = authorize(100, "auth:2");
        Instant cutoff = clock.advance(Duration.ofMinutes(1));
        JournalEntry fresh = authorize(100, "auth:3");
        ledger.voidHold(h2.id(), null, ""); // resolved holds are no longer open

        try (Connection worker = connection();
                Connection other = connection();
                Connection capturer = connection()) {
            assertThat(ledger.lockOpenHolds(worker, cutoff, 1)).containsExactly(h0);
            // a hold being captured in an open transaction is skipped as well
            ledger.capture(capturer, h1.id(), null, "");
            assertThat(ledger.lockOpenHolds(other, cutoff, 10)).isEmpty();
            capturer.rollback();
            assertThat(ledger.lockOpenHolds(other, cutoff, 10)).containsExactly(h1);
            other.rollback();
            ledger.voidHold(worker, h0.id(), "void:0", "expired");
            worker.commit();
            assertThat(ledger.lockOpenHolds(other, clock.instant().plusSeconds(1), 10))
                    .containsExactly(h1, fresh);
            other.rollback();
        }
        assertThatThrownBy(() -> {
                    try (Connection c = connection()) {
                        ledger.lockOpenHolds(c, cutoff, 0);
                    }
                })
                .isInstanceOf(LedgerValidationException.class);
        assertThatThrownBy(() -> {
                    try (Connection c = dataSource.getConnection()) {
                        ledger.lockOpenHolds(c, cutoff, 1); // auto-commit: the lock would not outlive the statement
                    }
                })
                .isInstanceOf(LedgerValidationException.class)
                .hasMessageContaining("auto-commit");
        assertThat(ledger.pendingHold(h0.id()).orElseThrow().state()).isEqualTo(PendingHold.State.VOIDED);
    }
}
