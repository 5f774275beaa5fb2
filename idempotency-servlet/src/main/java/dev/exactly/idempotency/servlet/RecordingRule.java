package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * Decides what a handler's response does to its key. The rule, and why:
 *
 * <ul>
 *   <li>marked with the request attribute {@link IdempotencyFilter#DO_NOT_RECORD} → released: the
 *       application says nothing happened that a retry could repeat;</li>
 *   <li>2xx and 3xx → {@code COMPLETED}, replayed: the operation happened;</li>
 *   <li>401, 403, 408, 429 → released: the request was refused before it was processed
 *       (authentication, authorisation, timeout, rate limit), and the same request may succeed later;</li>
 *   <li>406, 415 → released: refused for a header the fingerprint does not cover ({@code Accept},
 *       {@code Content-Type}); recorded, a corrected retry with the same key would replay the refusal;</li>
 *   <li>422 whose problem {@code type} is {@link Problems#VALIDATION_FAILED} → released: the request was
 *       rejected before any side effect, so the client may fix it and retry with the same key;</li>
 *   <li>any other 4xx (400 business errors, 402 declines, 404, 409 business conflicts, ...) →
 *       {@code FAILED}, replayed: a deterministic answer that retrying must not turn into a second
 *       attempt at the processor;</li>
 *   <li>5xx → released so a retry runs again (the failure is presumed transient and side-effect free),
 *       unless the route sets {@link IdempotentRoute#recordServerErrors()}: then {@code FAILED} and
 *       replayed, as Stripe does, for handlers that cannot tell whether a 5xx happened before or after
 *       their side effect;</li>
 *   <li>an exception thrown by the handler → released (by the engine) and rethrown.</li>
 * </ul>
 */
final class RecordingRule {
    private RecordingRule() {}

    static Outcome outcome(
            IdempotentRoute route,
            int status,
            @Nullable String contentType,
            byte @Nullable [] body,
            boolean doNotRecord,
            StoredResponse stored) {
        if (doNotRecord || releasedByStatus(route, status) || isValidationFailure(status, contentType, body)) {
            return Outcome.release(stored);
        }
        return status < 400 ? Outcome.complete(stored) : Outcome.fail(stored);
    }

    /** Whether a response with this status is released whatever its body. */
    static boolean releasedByStatus(IdempotentRoute route, int status) {
        return switch (status) {
            case 401, 403, 406, 408, 415, 429 -> true;
            default -> status >= 500 && !route.recordServerErrors();
        };
    }

    private static boolean isValidationFailure(int status, @Nullable String contentType, byte @Nullable [] body) {
        if (status != 422 || body == null || !Fingerprinter.isJson(contentType)) {
            return false;
        }
        return Problems.VALIDATION_FAILED.toString().equals(Json.topLevelString(body, "type"));
    }
}
