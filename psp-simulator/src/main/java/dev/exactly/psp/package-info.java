/**
 * A payment processor stand-in (a tiny Stripe): charges, holds captured or voided later, refunds,
 * each with its own idempotency keys, capture and refund logs, and fault injection: {@link dev.exactly.psp.PspSimulator} serves it over HTTP on loopback (in tests or
 * alone via its {@code main}), {@link dev.exactly.psp.PspClient} calls it and tells an unknown outcome
 * (timeout, lost connection, 5xx) from a definite refusal (4xx). The module's README documents the
 * HTTP API and the {@code Psp-Fault} header.
 */
@NullMarked
package dev.exactly.psp;

import org.jspecify.annotations.NullMarked;
