package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import java.util.List;
import java.util.Objects;

/**
 * A rule that makes the processor decline a new charge with a code. Rules in {@link FaultSettings}
 * are checked in order, first match wins, before the built-in {@link #TEST_CARDS}.
 */
public sealed interface DeclineRule {

    /**
     * Test-card tokens that always decline, whatever the fault settings (as a real processor's test
     * mode does): {@code tok_chargeDeclined} → {@code card_declined}, {@code tok_insufficientFunds} and
     * {@code tok_chargeDeclinedInsufficientFunds} → {@code insufficient_funds},
     * {@code tok_chargeDeclinedFraudulent} → {@code fraudulent}, {@code tok_chargeDeclinedExpiredCard}
     * → {@code expired_card}, {@code tok_chargeDeclinedIncorrectCvc} → {@code incorrect_cvc}.
     */
    List<DeclineRule> TEST_CARDS = List.of(
            source("tok_chargeDeclined", "card_declined"),
            source("tok_insufficientFunds", "insufficient_funds"),
            source("tok_chargeDeclinedInsufficientFunds", "insufficient_funds"),
            source("tok_chargeDeclinedFraudulent", "fraudulent"),
            source("tok_chargeDeclinedExpiredCard", "expired_card"),
            source("tok_chargeDeclinedIncorrectCvc", "incorrect_cvc"));

    /** The decline code this rule produces. */
    String code();

    /** Whether this rule declines the request. */
    boolean matches(PspChargeRequest request);

    /** Decline every charge to this card token. */
    static DeclineRule source(String source, String code) {
        return new BySource(source, code);
    }

    /** Decline every charge of exactly this amount (any currency). */
    static DeclineRule amount(long amount, String code) {
        return new ByAmount(amount, code);
    }

    /** Decline every charge of at least this amount (any currency). */
    static DeclineRule amountAtLeast(long minimum, String code) {
        return new AmountAtLeast(minimum, code);
    }

    /** Declines by card token. */
    record BySource(String source, String code) implements DeclineRule {
        public BySource {
            Objects.requireNonNull(source, "source");
            Checks.declineCode(code);
        }

        @Override
        public boolean matches(PspChargeRequest request) {
            return request.source().equals(source);
        }
    }

    /** Declines one exact amount. */
    record ByAmount(long amount, String code) implements DeclineRule {
        public ByAmount {
            Checks.declineCode(code);
        }

        @Override
        public boolean matches(PspChargeRequest request) {
            return request.amount() == amount;
        }
    }

    /** Declines amounts at or above a minimum. */
    record AmountAtLeast(long minimum, String code) implements DeclineRule {
        public AmountAtLeast {
            Checks.declineCode(code);
        }

        @Override
        public boolean matches(PspChargeRequest request) {
            return request.amount() >= minimum;
        }
    }
}
