package dev.exactly.payments.refund;

import java.time.Instant;

/**
 * A refund that was journaled.
 *
 * @param id       the refund id ({@code re_…})
 * @param chargeId the refunded charge
 * @param amount   minor units
 * @param currency lower-case ISO 4217 code
 * @param created  when it was decided
 */
public record Refund(String id, String chargeId, long amount, String currency, Instant created) {}
