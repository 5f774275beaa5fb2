package dev.exactly.payments.web;

import dev.exactly.idempotency.servlet.Problem;
import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.payments.json.FieldError;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The one factory of the service's problem documents (RFC 9457, {@code application/problem+json}). Types
 * are stable URIs under {@link Problems#BASE}, shared with the idempotency filter's own problems, each with
 * a Stripe-style {@code code}:
 *
 * <table>
 *   <caption>Problem types of the payment API</caption>
 *   <tr><th>slug</th><th>status</th><th>code</th><th>recorded (replayed)</th></tr>
 *   <tr><td>validation-failed</td><td>422</td><td>validation_failed</td><td>no</td></tr>
 *   <tr><td>card-declined</td><td>402</td><td>card_declined</td><td>yes</td></tr>
 *   <tr><td>refund-exceeds-charge</td><td>422</td><td>refund_exceeds_charge</td><td>yes</td></tr>
 *   <tr><td>charge-not-refundable</td><td>422</td><td>charge_not_refundable</td><td>yes</td></tr>
 *   <tr><td>refund-failed</td><td>402</td><td>refund_failed</td><td>yes</td></tr>
 *   <tr><td>resource-missing</td><td>404</td><td>resource_missing</td><td>yes</td></tr>
 *   <tr><td>charge-pending</td><td>409</td><td>charge_pending</td><td>no</td></tr>
 *   <tr><td>charge-already-captured</td><td>409</td><td>charge_already_captured</td><td>yes</td></tr>
 *   <tr><td>charge-voided</td><td>409</td><td>charge_voided</td><td>yes</td></tr>
 *   <tr><td>charge-not-authorized</td><td>409</td><td>charge_not_authorized</td><td>yes</td></tr>
 *   <tr><td>capture-exceeds-authorization</td><td>402</td><td>amount_too_large</td><td>yes</td></tr>
 *   <tr><td>processor-refused</td><td>402</td><td>the processor's code</td><td>yes</td></tr>
 *   <tr><td>charge-action-in-progress</td><td>409</td><td>charge_action_in_progress</td><td>no</td></tr>
 *   <tr><td>payment-dead-lettered</td><td>409</td><td>payment_dead_lettered</td><td>no</td></tr>
 *   <tr><td>processor-unavailable</td><td>503</td><td>processor_unavailable, processor_outcome_unknown</td><td>no</td></tr>
 *   <tr><td>unauthorized</td><td>401</td><td>api_key_invalid</td><td>-</td></tr>
 *   <tr><td>forbidden</td><td>403</td><td>operator_only, tenant_only</td><td>-</td></tr>
 *   <tr><td>operator-conflict</td><td>409</td><td>operator_conflict</td><td>-</td></tr>
 *   <tr><td>database-unavailable</td><td>503</td><td>database_unavailable</td><td>no</td></tr>
 *   <tr><td>outcome-unknown</td><td>503</td><td>outcome_unknown</td><td>no</td></tr>
 *   <tr><td>method-not-allowed, not-acceptable, unsupported-media-type</td><td>405, 406, 415</td><td>the slug with '_'</td><td>no</td></tr>
 *   <tr><td>request-rejected</td><td>400</td><td>request_rejected</td><td>-</td></tr>
 *   <tr><td>malformed-request</td><td>400</td><td>malformed_request</td><td>-</td></tr>
 *   <tr><td>internal-error</td><td>500</td><td>internal_error</td><td>no</td></tr>
 * </table>
 * plus the idempotency problems of {@link Problems} (key missing, invalid, in use, reused, lease lost).
 */
public final class ApiProblems {
    public static final String MEDIA_TYPE = Problem.MEDIA_TYPE;

    public static final URI CARD_DECLINED = type("card-declined");
    public static final URI REFUND_EXCEEDS_CHARGE = type("refund-exceeds-charge");
    public static final URI CHARGE_NOT_REFUNDABLE = type("charge-not-refundable");
    public static final URI REFUND_FAILED = type("refund-failed");
    public static final URI RESOURCE_MISSING = type("resource-missing");
    public static final URI WEBHOOK_ENDPOINT_LIMIT = type("webhook-endpoint-limit");
    public static final URI CHARGE_PENDING = type("charge-pending");
    public static final URI CHARGE_ALREADY_CAPTURED = type("charge-already-captured");
    public static final URI CHARGE_VOIDED = type("charge-voided");
    public static final URI CHARGE_NOT_AUTHORIZED = type("charge-not-authorized");
    public static final URI CAPTURE_EXCEEDS_AUTHORIZATION = type("capture-exceeds-authorization");
    public static final URI PROCESSOR_REFUSED = type("processor-refused");
    public static final URI CHARGE_ACTION_IN_PROGRESS = type("charge-action-in-progress");
    public static final URI PAYMENT_DEAD_LETTERED = type("payment-dead-lettered");
    public static final URI PROCESSOR_UNAVAILABLE = type("processor-unavailable");
    public static final URI UNAUTHORIZED = type("unauthorized");
    public static final URI FORBIDDEN = type("forbidden");
    public static final URI DATABASE_UNAVAILABLE = type("database-unavailable");
    public static final URI OPERATOR_CONFLICT = type("operator-conflict");
    public static final URI INTERNAL_ERROR = type("internal-error");
    public static final URI REQUEST_REJECTED = type("request-rejected");
    public static final URI MALFORMED_REQUEST = type("malformed-request");

    private ApiProblems() {}

    private static URI type(String slug) {
        return Problems.BASE.resolve(slug);
    }

    /** The response for a problem document. */
    public static ApiResponse response(Problem problem) {
        return new ApiResponse(problem.status(), MEDIA_TYPE, null, problem.toJson(), false, true, null);
    }

    /** The most errors a validation problem lists; the detail says how many more there were. */
    public static final int MAX_ERRORS = 20;

    /**
     * 422, not recorded: the client may fix the request and retry with the same key. Each error is
     * {@code {"field":…,"code":…,"message":…}}; the first {@value #MAX_ERRORS} are listed (a body of a
     * few kilobytes can break thousands of rules: the answer stays small), the detail then says how many
     * there were.
     */
    public static ApiResponse validationFailed(String detail, List<FieldError> errors) {
        if (errors.size() > MAX_ERRORS) {
            detail = detail + " (the first " + MAX_ERRORS + " of " + errors.size() + " errors are listed)";
        }
        List<Map<String, Object>> members = errors.stream()
                .limit(MAX_ERRORS)
                .map(e -> {
                    Map<String, Object> error = new LinkedHashMap<>();
                    error.put("field", e.field());
                    error.put("code", e.code());
                    error.put("message", e.message());
                    return error;
                })
                .toList();
        return response(Problems.validationFailed(detail).with("errors", members));
    }

    /** 422, not recorded: the request body could not be read at all. */
    public static ApiResponse unreadableBody() {
        return validationFailed(
                "the request body could not be read", List.of(new FieldError("", "invalid_body", "unreadable body")));
    }

    /** 402, recorded: the processor declined the charge. */
    public static ApiResponse cardDeclined(String chargeId, String declineCode) {
        return response(new Problem(
                        CARD_DECLINED,
                        "Card declined",
                        402,
                        "the processor declined the charge",
                        "card_declined",
                        Map.of())
                .with("decline_code", declineCode)
                .with("charge", chargeId));
    }

    /** 402, recorded: an operator resolved the charge as failed. */
    public static ApiResponse chargeFailed(String chargeId, String reason) {
        return response(new Problem(
                        CARD_DECLINED, "Card declined", 402, "the charge failed: " + reason, "card_declined", Map.of())
                .with("decline_code", "processing_error")
                .with("charge", chargeId));
    }

    /** 422, recorded: the refunds would exceed the charge. */
    public static ApiResponse refundExceedsCharge(String chargeId, long requested, long refundable) {
        return response(new Problem(
                        REFUND_EXCEEDS_CHARGE,
                        "Refund exceeds charge",
                        422,
                        "the refund of " + requested + " exceeds the " + refundable + " left to refund on the charge",
                        "refund_exceeds_charge",
                        Map.of())
                .with("charge", chargeId)
                .with("refundable", refundable));
    }

    /** 409: the tenant has as many enabled webhook endpoints as it may have. */
    public static ApiResponse webhookEndpointLimit(int limit) {
        return response(new Problem(
                        WEBHOOK_ENDPOINT_LIMIT,
                        "Webhook endpoint limit reached",
                        409,
                        "a tenant may have at most " + limit + " enabled webhook endpoints: disable one first "
                                + "(DELETE /v1/webhook-endpoints/{id}), or receive several event types at one",
                        "webhook_endpoint_limit",
                        Map.of())
                .with("limit", limit));
    }

    /** 422, recorded: the charge did not succeed, so there is nothing to refund. */
    public static ApiResponse chargeNotRefundable(String chargeId, String status) {
        return chargeNotRefundableBecause(
                chargeId, "the charge is " + status + "; only succeeded charges can be refunded");
    }

    /** 422, recorded: the charge cannot be refunded, for the reason {@code detail} gives. */
    public static ApiResponse chargeNotRefundableBecause(String chargeId, String detail) {
        return response(new Problem(
                        CHARGE_NOT_REFUNDABLE, "Charge not refundable", 422, detail, "charge_not_refundable", Map.of())
                .with("charge", chargeId));
    }

    /** 402, recorded: the processor refused the refund ({@code failure_code}); nothing moved. */
    public static ApiResponse refundFailed(String refundId, String chargeId, String failureCode) {
        return response(new Problem(
                        REFUND_FAILED,
                        "Refund failed",
                        402,
                        "the processor refused the refund: " + failureCode,
                        "refund_failed",
                        Map.of())
                .with("failure_code", failureCode)
                .with("refund", refundId)
                .with("charge", chargeId));
    }

    /**
     * 503, not recorded: the processor gave no answer to a refund. The refund stays pending (its amount
     * reserved on the charge) and is finished by recovery, which asks the processor under the same key; a
     * retry with the same Idempotency-Key gets it, and never refunds twice.
     */
    public static ApiResponse refundProcessorUnavailable(String refundId, boolean outcomeUnknown, Duration retryAfter) {
        return response(new Problem(
                                PROCESSOR_UNAVAILABLE,
                                "Processor unavailable",
                                503,
                                outcomeUnknown
                                        ? "the processor did not answer; the refund will be completed by recovery, retry with the same Idempotency-Key"
                                        : "the processor could not be reached; the refund will be retried, retry with the same Idempotency-Key",
                                outcomeUnknown ? "processor_outcome_unknown" : "processor_unavailable",
                                Map.of())
                        .with("refund", refundId))
                .notRecordable()
                .withRetryAfter(retryAfter);
    }

    /** 409, not recorded: recovery gave up on the refund; an operator must settle it. */
    public static ApiResponse refundDeadLettered(String refundId) {
        return response(new Problem(
                                PAYMENT_DEAD_LETTERED,
                                "Payment needs attention",
                                409,
                                "the processor's answer for this refund could not be obtained; an operator will resolve it",
                                "payment_dead_lettered",
                                Map.of())
                        .with("refund", refundId))
                .notRecordable();
    }

    /** 404. */
    public static ApiResponse notFound(String what) {
        return response(new Problem(
                RESOURCE_MISSING, "Resource missing", 404, "no such " + what, "resource_missing", Map.of()));
    }

    /** 409, not recorded: the charge is still being processed. */
    public static ApiResponse chargePending(String chargeId) {
        return response(new Problem(
                                CHARGE_PENDING,
                                "Charge pending",
                                409,
                                "the charge is still being processed; retry later",
                                "charge_pending",
                                Map.of())
                        .with("charge", chargeId))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(1));
    }

    /** {@code capture} → {@code captured}, {@code void} → {@code voided}. */
    private static String done(String action) {
        return action + (action.endsWith("e") ? "d" : "ed");
    }

    /** 409, recorded: a capture or void of a charge that a capture already resolved (or that captured at once). */
    public static ApiResponse chargeAlreadyCaptured(String chargeId, String action) {
        return response(new Problem(
                        CHARGE_ALREADY_CAPTURED,
                        "Charge already captured",
                        409,
                        "the charge is already captured; it cannot be " + done(action),
                        "charge_already_captured",
                        Map.of())
                .with("charge", chargeId));
    }

    /** 409, recorded: a capture or void of a voided authorization (voided by a request or by its expiry). */
    public static ApiResponse chargeVoided(String chargeId, String action) {
        return response(new Problem(
                        CHARGE_VOIDED,
                        "Charge voided",
                        409,
                        "the authorization is voided; it cannot be " + done(action),
                        "charge_voided",
                        Map.of())
                .with("charge", chargeId));
    }

    /** 409, recorded: a capture or void of a charge that was never authorized (it failed). */
    public static ApiResponse chargeNotAuthorized(String chargeId, String action) {
        return response(new Problem(
                        CHARGE_NOT_AUTHORIZED,
                        "Charge not authorized",
                        409,
                        "the charge holds no authorization; it cannot be " + done(action),
                        "charge_not_authorized",
                        Map.of())
                .with("charge", chargeId));
    }

    /** 402, recorded: a capture of more than the authorization holds. */
    public static ApiResponse captureExceedsAuthorization(String chargeId, long requested, long authorized) {
        return response(new Problem(
                        CAPTURE_EXCEEDS_AUTHORIZATION,
                        "Capture exceeds the authorization",
                        402,
                        "requested " + requested + ", authorized " + authorized,
                        "amount_too_large",
                        Map.of())
                .with("charge", chargeId)
                .with("authorized", authorized));
    }

    /** 402, recorded: the processor refused the capture or void, with its code; the charge is unchanged. */
    public static ApiResponse processorRefused(String chargeId, String action, String code) {
        return response(new Problem(
                        PROCESSOR_REFUSED,
                        "Processor refused",
                        402,
                        "the processor refused to " + action + " the charge (" + code + ")",
                        code,
                        Map.of())
                .with("charge", chargeId));
    }

    /** 409, not recorded: another capture or void of this charge is under way; retry later with the same key. */
    public static ApiResponse chargeActionInProgress(String chargeId) {
        return response(new Problem(
                                CHARGE_ACTION_IN_PROGRESS,
                                "Capture or void in progress",
                                409,
                                "another capture or void of this charge is in progress; retry later with the same Idempotency-Key",
                                "charge_action_in_progress",
                                Map.of())
                        .with("charge", chargeId))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(1));
    }

    /** 409, not recorded: recovery gave up; an operator must resolve the charge. */
    public static ApiResponse deadLettered(String chargeId) {
        return response(new Problem(
                                PAYMENT_DEAD_LETTERED,
                                "Payment needs attention",
                                409,
                                "the processor's answer for this charge could not be obtained; an operator will resolve it",
                                "payment_dead_lettered",
                                Map.of())
                        .with("charge", chargeId))
                .notRecordable();
    }

    /**
     * 503, not recorded: the processor gave no answer. When the outcome is unknown the charge is left
     * for recovery, which asks the processor under the same key; a retry with the same Idempotency-Key
     * gets the charge once that is done, and never charges twice.
     */
    public static ApiResponse processorUnavailable(String chargeId, boolean outcomeUnknown, Duration retryAfter) {
        return response(new Problem(
                                PROCESSOR_UNAVAILABLE,
                                "Processor unavailable",
                                503,
                                outcomeUnknown
                                        ? "the processor did not answer; the charge will be completed by recovery, retry with the same Idempotency-Key"
                                        : "the processor could not be reached; the charge will be retried, retry with the same Idempotency-Key",
                                outcomeUnknown ? "processor_outcome_unknown" : "processor_unavailable",
                                Map.of())
                        .with("charge", chargeId))
                .notRecordable()
                .withRetryAfter(retryAfter);
    }

    /** 503, not recorded: the processor could not be asked (an operator's read of its books). */
    public static ApiResponse processorUnreachable(String detail) {
        return response(new Problem(
                        PROCESSOR_UNAVAILABLE, "Processor unavailable", 503, detail, "processor_unavailable", Map.of()))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(5));
    }

    /** 409 + Retry-After, not recorded: the key is in flight. */
    public static ApiResponse keyInUse(Duration retryAfter) {
        return response(Problems.keyInUse(false)).notRecordable().withRetryAfter(retryAfter);
    }

    /** 422, not recorded by the hot tier (its record must keep the original fingerprint's answer). */
    public static ApiResponse keyReused() {
        return response(Problems.keyReused()).notRecordable();
    }

    /** 409, not recorded: this owner lost its lease; another finished or will finish the request. */
    public static ApiResponse leaseLost() {
        return response(Problems.leaseLost()).notRecordable().withRetryAfter(Duration.ofSeconds(1));
    }

    /** 409: an operator action that does not fit the charge's state. */
    public static ApiResponse operatorConflict(String detail) {
        return response(new Problem(
                        OPERATOR_CONFLICT, "Operator action refused", 409, detail, "operator_conflict", Map.of()))
                .notRecordable();
    }

    /** 401. */
    public static ApiResponse unauthorized(String detail) {
        return response(new Problem(UNAUTHORIZED, "Unauthorized", 401, detail, "api_key_invalid", Map.of()));
    }

    /** 403. */
    public static ApiResponse forbidden(String detail, String code) {
        return response(new Problem(FORBIDDEN, "Forbidden", 403, detail, code, Map.of()));
    }

    /**
     * 400: the path is not in canonical form (encoded separators or dots, {@code ;} parameters, {@code //},
     * dot segments, control characters); refused before routing, authentication or anything else.
     */
    public static ApiResponse requestRejected() {
        return response(new Problem(
                REQUEST_REJECTED,
                "Request rejected",
                400,
                "the request path is not in canonical form (encoded '/', '\\' or '.', ';' parameters, '//', '.' "
                        + "or '..' segments and control characters are refused); the request was refused before it ran",
                "request_rejected",
                Map.of()));
    }

    /**
     * An error the servlet container raised before the application saw the request (a malformed request
     * line, header or encoding, headers too large, a transfer coding or HTTP version it does not speak):
     * 400 {@code malformed-request} — the request could not be read, whichever way the container put it
     * (400, 501, 505) — or the status as a problem; never the container's own page.
     */
    public static ApiResponse containerError(int status) {
        return switch (status) {
            case 400, 501, 505 ->
                response(new Problem(
                        MALFORMED_REQUEST,
                        "Malformed request",
                        400,
                        "the server could not read the request (its request line, headers, encoding or transfer "
                                + "coding); it was refused before it ran",
                        "malformed_request",
                        Map.of()));
            case 404 -> notFound("resource");
            default -> status >= 500 ? internalError() : forStatus(status, "the request was refused before it ran");
        };
    }

    /**
     * 503, not recorded: the database could not be reached before anything was written, so this request
     * did not run (an earlier one with the same key may have: retry with the same key).
     */
    public static ApiResponse databaseUnavailable() {
        return response(new Problem(
                        DATABASE_UNAVAILABLE,
                        "Database unavailable",
                        503,
                        "the database could not be reached, so this request was refused before it ran; retry later "
                                + "(with the same Idempotency-Key, if it had one)",
                        "database_unavailable",
                        Map.of()))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(1));
    }

    /**
     * 503, not recorded: the request may have taken effect (e.g. the database failed after the processor
     * was called, or during a commit) and its outcome is not known here. A retry with the same key gets
     * it once recovery has settled it; a new key could pay twice.
     *
     * @param chargeId the charge concerned, or {@code null}
     */
    public static ApiResponse outcomeUnknown(String detail, @Nullable String chargeId) {
        Problem problem = Problems.outcomeUnknown(detail);
        return response(chargeId == null ? problem : problem.with("charge", chargeId))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(1));
    }

    /**
     * 503, not recorded: as {@link #outcomeUnknown}, for a request sent without an Idempotency-Key (a route
     * that takes none, or a client that sent none): no key can fetch its outcome, and sending it again may
     * do it twice, so the client is told to look first.
     */
    public static ApiResponse outcomeUnknownWithoutKey(String detail) {
        return response(new Problem(
                        Problems.OUTCOME_UNKNOWN,
                        "Outcome unknown",
                        503,
                        detail + WITHOUT_KEY,
                        "outcome_unknown",
                        Map.of()))
                .notRecordable()
                .withRetryAfter(Duration.ofSeconds(1));
    }

    /** What a request that may have taken effect, and carried no key, is told to do next. */
    private static final String WITHOUT_KEY = "; this request may have taken effect, and it carried no Idempotency-Key "
            + "to fetch its outcome with: check whether it did (read the resource or list) before sending it again";

    /** 500, not recorded: a bug. Whether the request took effect is not known here. */
    public static ApiResponse internalError() {
        return internalError(true);
    }

    /**
     * 500, not recorded: a bug. Whether the request took effect is not known here; {@code keyed}: whether it
     * carried an Idempotency-Key, with which a retry gets its outcome (without one, the client is told to
     * look before sending it again).
     */
    public static ApiResponse internalError(boolean keyed) {
        return response(new Problem(
                        INTERNAL_ERROR,
                        "Internal error",
                        500,
                        keyed
                                ? "an unexpected error occurred; the request may have taken effect: retry with the same "
                                        + "Idempotency-Key to get its outcome"
                                : "an unexpected error occurred" + WITHOUT_KEY,
                        "internal_error",
                        Map.of()))
                .notRecordable();
    }

    /** A protocol error (405, 406, 415): type {@code method-not-allowed}, {@code not-acceptable}, ... */
    public static ApiResponse forStatus(int status, @Nullable String detail) {
        String slug = switch (status) {
            case 405 -> "method-not-allowed";
            case 406 -> "not-acceptable";
            case 415 -> "unsupported-media-type";
            case 413 -> "payload-too-large";
            case 414 -> "uri-too-long";
            case 431 -> "request-header-fields-too-large";
            case 505 -> "http-version-not-supported";
            default -> "http-" + status;
        };
        Problem bare = Problems.forStatus(status, detail);
        return response(new Problem(type(slug), bare.title(), status, detail, slug.replace('-', '_'), Map.of()))
                .notRecordable();
    }

    /** A problem of the idempotency layer. */
    public static ApiResponse idempotency(Problem problem, @Nullable Duration retryAfter) {
        ApiResponse response = response(problem).notRecordable();
        return retryAfter == null ? response : response.withRetryAfter(retryAfter);
    }
}
