package dev.exactly.payments.charge;

import dev.exactly.idempotency.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * Renders the answers captures and voids record, inside the transaction that decides them (see
 * {@link ChargeAnswers}); the web layer implements it.
 */
public interface ChargeActionAnswers {

    /** Why a capture or void was refused. */
    enum Refusal {
        /** The charge was captured (at once, or by an earlier capture). */
        ALREADY_CAPTURED,
        /** The authorization was voided (by a request or by its expiry). */
        VOIDED,
        /** The charge failed: it holds no authorization. */
        NOT_AUTHORIZED,
        /** A capture of more than the authorization holds. */
        EXCEEDS_AUTHORIZATION,
        /** The processor refused, with its code. */
        PROCESSOR_REFUSED
    }

    /** 200: the charge after its capture or void. */
    StoredResponse resolved(ChargeRow charge);

    /**
     * The refusal of a capture or void of {@code charge}.
     *
     * @param requested     the amount a refused capture asked for ({@code null}: all)
     * @param processorCode the processor's code of a {@link Refusal#PROCESSOR_REFUSED}
     */
    StoredResponse refused(
            ChargeRow charge,
            ChargeAction.Kind kind,
            Refusal refusal,
            @Nullable Long requested,
            @Nullable String processorCode);
}
