package dev.exactly.idempotency.servlet;

import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.InvalidIdempotencyKeyException;
import dev.exactly.idempotency.JsonTooDeepException;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.PayloadTooLargeException;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.StoreUnavailableException;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one factory of problem documents. Every type is a stable URI under {@link #BASE}
 * ({@code https://exactly.dev/problems/<slug>}) with a fixed title and a Stripe-style {@code code}:
 *
 * <table>
 *   <caption>Problem types</caption>
 *   <tr><th>slug</th><th>status</th><th>code</th></tr>
 *   <tr><td>idempotency-key-missing</td><td>400</td><td>idempotency_key_missing</td></tr>
 *   <tr><td>json-too-deep</td><td>400</td><td>json_too_deep</td></tr>
 *   <tr><td>idempotency-key-invalid</td><td>400</td><td>idempotency_key_invalid</td></tr>
 *   <tr><td>tenant-unresolved</td><td>401</td><td>tenant_unresolved</td></tr>
 *   <tr><td>idempotency-key-in-use</td><td>409</td><td>idempotency_key_in_use</td></tr>
 *   <tr><td>idempotency-lease-lost</td><td>409</td><td>idempotency_lease_lost</td></tr>
 *   <tr><td>payload-too-large</td><td>413</td><td>payload_too_large</td></tr>
 *   <tr><td>unsupported-media-type</td><td>415</td><td>unsupported_media_type</td></tr>
 *   <tr><td>idempotency-key-reused</td><td>422</td><td>idempotency_key_reused</td></tr>
 *   <tr><td>validation-failed</td><td>422</td><td>validation_failed</td></tr>
 *   <tr><td>idempotency-store-unavailable</td><td>503</td><td>idempotency_store_unavailable</td></tr>
 *   <tr><td>outcome-unknown</td><td>503</td><td>outcome_unknown</td></tr>
 *   <tr><td>response-not-stored</td><td>the original</td><td>response_not_stored</td></tr>
 * </table>
 *
 * <h2>What an error tells the client to do next</h2>
 * Every type says whether the request it answers ran. {@code idempotency-store-unavailable},
 * {@code idempotency-key-in-use} and the 4xx refusals mean <em>this request was refused before it ran</em>;
 * {@code outcome-unknown} and {@code idempotency-lease-lost} mean <em>this request may have run</em>. In
 * neither case does the server know what an earlier request with the same key did, so no error ever says
 * that a new key is safe: the client retries with the <strong>same</strong> {@code Idempotency-Key}, and
 * gets the first outcome once it is known.
 *
 * <p>Applications answer a request that fails validation with {@link #validationFailed(String)}: the
 * filter recognises that type and does not record the response, so the client may fix the request and
 * retry with the same key.
 */
public final class Problems {
    /** The base of every problem type URI. */
    public static final URI BASE = URI.create("https://exactly.dev/problems/");

    public static final URI IDEMPOTENCY_KEY_MISSING = type("idempotency-key-missing");
    public static final URI IDEMPOTENCY_KEY_INVALID = type("idempotency-key-invalid");
    public static final URI TENANT_UNRESOLVED = type("tenant-unresolved");
    public static final URI IDEMPOTENCY_KEY_IN_USE = type("idempotency-key-in-use");
    public static final URI IDEMPOTENCY_LEASE_LOST = type("idempotency-lease-lost");
    public static final URI PAYLOAD_TOO_LARGE = type("payload-too-large");
    public static final URI JSON_TOO_DEEP = type("json-too-deep");
    public static final URI UNSUPPORTED_MEDIA_TYPE = type("unsupported-media-type");
    public static final URI OUTCOME_UNKNOWN = type("outcome-unknown");
    public static final URI IDEMPOTENCY_KEY_REUSED = type("idempotency-key-reused");
    public static final URI VALIDATION_FAILED = type("validation-failed");
    public static final URI IDEMPOTENCY_STORE_UNAVAILABLE = type("idempotency-store-unavailable");
    public static final URI RESPONSE_NOT_STORED = type("response-not-stored");
    /** RFC 9457's type for a problem that is just its status code. */
    public static final URI ABOUT_BLANK = URI.create("about:blank");

    private Problems() {}

    private static URI type(String slug) {
        return BASE.resolve(slug);
    }

    private static Problem problem(URI type, String title, int status, @Nullable String detail, String code) {
        return new Problem(type, title, status, detail, code, Map.of());
    }

    /** 400: the route requires an {@code Idempotency-Key} and none was sent. */
    public static Problem keyMissing() {
        return keyMissing(IdempotencyFilter.KEY_HEADER);
    }

    /** 400: the route requires a key in the header {@code headerName} and none was sent. */
    public static Problem keyMissing(String headerName) {
        return problem(
                IDEMPOTENCY_KEY_MISSING,
                "Idempotency-Key missing",
                400,
                "this endpoint requires " + ("AEIOUaeiou".indexOf(headerName.charAt(0)) >= 0 ? "an " : "a ")
                        + headerName + " header",
                "idempotency_key_missing");
    }

    /** 400: the key is empty, too long, not printable ASCII, or sent twice with different values. */
    public static Problem keyInvalid(String detail) {
        return problem(IDEMPOTENCY_KEY_INVALID, "Idempotency-Key invalid", 400, detail, "idempotency_key_invalid");
    }

    /** 401: no tenant could be resolved for a guarded request. */
    public static Problem tenantUnresolved() {
        return problem(
                TENANT_UNRESOLVED,
                "Tenant unresolved",
                401,
                "the request is not authenticated as a tenant",
                "tenant_unresolved");
    }

    /** 409: a request with the same key is still being processed. */
    public static Problem keyInUse(boolean waited) {
        return problem(
                IDEMPOTENCY_KEY_IN_USE,
                "Idempotency-Key in use",
                409,
                waited
                        ? "a request with this Idempotency-Key is still in progress after waiting for it; this "
                                + "request was not run: retry later with the same Idempotency-Key"
                        : "a request with this Idempotency-Key is already in progress; this request was not run: "
                                + "retry later with the same Idempotency-Key",
                "idempotency_key_in_use");
    }

    /** 409: the request ran but lost its lease before its outcome was recorded; retry with the same key. */
    public static Problem leaseLost() {
        return problem(
                IDEMPOTENCY_LEASE_LOST,
                "Idempotency lease lost",
                409,
                "the request lost its idempotency lease while it ran (its renewals stalled or it ran past the "
                        + "longest hold) and its outcome was not recorded; it may have taken effect: retry with the "
                        + "same Idempotency-Key to get its outcome",
                "idempotency_lease_lost");
    }

    /** 413: the request body is larger than the fingerprint limit. */
    public static Problem payloadTooLarge(long limitBytes) {
        return problem(
                        PAYLOAD_TOO_LARGE,
                        "Payload too large",
                        413,
                        "the request body exceeds the " + limitBytes
                                + "-byte limit; it was refused before anything ran",
                        "payload_too_large")
                .with("limit_bytes", limitBytes);
    }

    /** 400: the JSON body nests deeper than the limit; refused before it was parsed or run. */
    public static Problem jsonTooDeep(int maxDepth) {
        return problem(
                        JSON_TOO_DEEP,
                        "JSON nested too deeply",
                        400,
                        "the JSON request body nests arrays and objects deeper than " + maxDepth
                                + " levels; the request was refused before it ran",
                        "json_too_deep")
                .with("max_depth", maxDepth);
    }

    /** 415: the body's media type is not accepted here; refused before it ran. */
    public static Problem unsupportedMediaType(String detail) {
        return problem(UNSUPPORTED_MEDIA_TYPE, "Unsupported media type", 415, detail, "unsupported_media_type");
    }

    /** 422: the key was already used with a different request. */
    public static Problem keyReused() {
        return problem(
                IDEMPOTENCY_KEY_REUSED,
                "Idempotency-Key reused",
                422,
                "this Idempotency-Key was already used with a different request; use a new key for a new request",
                "idempotency_key_reused");
    }

    /**
     * 422: the request body failed validation. For applications: a response with this type is not
     * recorded, so the client may fix the request and retry with the same key. Add field errors with
     * {@link Problem#with(String, Object)}.
     */
    public static Problem validationFailed(String detail) {
        return problem(VALIDATION_FAILED, "Validation failed", 422, detail, "validation_failed");
    }

    /**
     * 503: the idempotency store could not be reached before the request ran, so it was refused (fail
     * closed). What an earlier request with this key did cannot be known now: retry with the same key.
     */
    public static Problem storeUnavailable() {
        return problem(
                IDEMPOTENCY_STORE_UNAVAILABLE,
                "Idempotency store unavailable",
                503,
                "the idempotency store could not be reached, so this request was refused before it ran; "
                        + "an earlier request with this Idempotency-Key may have run: retry with the same "
                        + "Idempotency-Key to get its outcome",
                "idempotency_store_unavailable");
    }

    /**
     * 503: the request may have run, and its outcome is not known here (e.g. a store or database failed
     * after the action started). Retry with the same key: the retry returns the outcome once it is known,
     * and never runs the action a second time where a durable record stands behind the key.
     */
    public static Problem outcomeUnknown(String detail) {
        return problem(
                OUTCOME_UNKNOWN,
                "Outcome unknown",
                503,
                detail + "; this request may have taken effect: retry with the same Idempotency-Key to get its "
                        + "outcome, never with a new one",
                "outcome_unknown");
    }

    /**
     * The body replayed in place of a response that was too large to store: the request <em>was</em>
     * executed with status {@code status}, so a retry must not run it again; look for the resource
     * (e.g. at the replayed {@code Location}).
     */
    public static Problem responseNotStored(int status, long bodyBytes, long limitBytes) {
        return problem(
                        RESPONSE_NOT_STORED,
                        "Response not stored",
                        status,
                        "the request was executed with status " + status + ", but its " + bodyBytes
                                + "-byte response body exceeded the " + limitBytes
                                + "-byte replay limit and was not stored; fetch the resource instead "
                                + "(see the Location header when present)",
                        "response_not_stored")
                .with("limit_bytes", limitBytes);
    }

    /** A bare status ({@code about:blank}), e.g. for a handler's {@code sendError(status, message)}. */
    public static Problem forStatus(int status, @Nullable String detail) {
        return new Problem(ABOUT_BLANK, reasonPhrase(status), status, detail, null, Map.of());
    }

    /** The problem for an exception the engine raised. */
    public static Problem from(IdempotencyException exception) {
        return switch (exception) {
            case InvalidIdempotencyKeyException invalid ->
                invalid.reason() == InvalidIdempotencyKeyException.Reason.MISSING
                        ? keyMissing()
                        : keyInvalid(
                                Objects.requireNonNullElse(invalid.getMessage(), "the Idempotency-Key is not valid"));
            case PayloadTooLargeException tooLarge -> payloadTooLarge(tooLarge.limitBytes());
            case JsonTooDeepException tooDeep -> jsonTooDeep(tooDeep.maxDepth());
            case IdempotencyKeyReusedException reused -> keyReused();
            case RequestInFlightException inFlight -> keyInUse(inFlight.waited());
            case StoreUnavailableException unavailable -> storeUnavailable();
            case LeaseLostException lost -> leaseLost();
        };
    }

    static String reasonPhrase(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 402 -> "Payment Required";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 410 -> "Gone";
            case 412 -> "Precondition Failed";
            case 413 -> "Content Too Large";
            case 415 -> "Unsupported Media Type";
            case 422 -> "Unprocessable Content";
            case 429 -> "Too Many Requests";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> "HTTP " + status;
        };
    }
}
