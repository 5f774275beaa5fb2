package dev.exactly.payments.charge;

import dev.exactly.idempotency.StoredResponse;

/**
 * Renders the answer a finished charge records: the exact response that the request, and every retry
 * with its key, is given. Phase 3 calls it inside its transaction, so that the answer commits together
 * with the charge's final state and its journal entry; the bytes are stored as they are and never rendered
 * again. The web layer implements it: the charge package decides outcomes, never HTTP answers.
 */
public interface ChargeAnswers {

    /**
     * The recorded answer of {@code charge} (still as phase 1 wrote it) finished with {@code outcome}.
     */
    StoredResponse finished(ChargeRow charge, ChargeOutcome outcome);

    /** The charge as the API shows it ({@code GET /v1/charges/{id}}): the JSON bytes of the resource. */
    byte[] resource(ChargeRow charge);
}
