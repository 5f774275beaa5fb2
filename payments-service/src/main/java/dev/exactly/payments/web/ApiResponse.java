package dev.exactly.payments.web;

import dev.exactly.idempotency.StoredResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the API answers to one request: the status, the media type, the exact body bytes and what the
 * hot tier should do with it. Finished charges and refunds keep these bytes, so every replay, from either
 * tier, is byte for byte the first answer.
 *
 * @param status      the HTTP status
 * @param contentType the media type
 * @param location    the {@code Location} of a created resource, or {@code null}
 * @param body        the body bytes
 * @param replayed    whether this is the recorded answer of an earlier request
 * @param recordable  false when the answer is not an outcome (a conflict, an unknown processor outcome,
 *                    a refusal that a retry may overcome): the hot tier must not record it
 * @param retryAfter  the {@code Retry-After} hint, or {@code null}
 */
public record ApiResponse(
        int status,
        String contentType,
        @Nullable String location,
        byte[] body,
        boolean replayed,
        boolean recordable,
        @Nullable Duration retryAfter) {

    /** The media type of JSON resources. */
    public static final String JSON = "application/json";

    private static final String CONTENT_TYPE = "content-type";
    private static final String LOCATION = "location";

    public ApiResponse {
        body = body.clone();
    }

    /** A fresh JSON answer. */
    public static ApiResponse json(int status, byte[] body) {
        return new ApiResponse(status, JSON, null, body, false, true, null);
    }

    /** A fresh JSON answer for a created resource. */
    public static ApiResponse created(String location, byte[] body) {
        return new ApiResponse(201, JSON, location, body, false, true, null);
    }

    /**
     * A recorded answer as the API sends it: its status and exact bytes, its media type and
     * {@code Location}.
     *
     * @param replayed whether an earlier request recorded it (then the replay markers are sent)
     */
    public static ApiResponse recorded(StoredResponse stored, boolean replayed) {
        List<String> type = stored.headers().getOrDefault(CONTENT_TYPE, List.of(JSON));
        List<String> location = stored.headers().get(LOCATION);
        return new ApiResponse(
                stored.status(),
                type.getFirst(),
                location == null ? null : location.getFirst(),
                stored.body(),
                replayed,
                true,
                null);
    }

    /** This answer as it is recorded for replays: status, media type, {@code Location} and bytes. */
    public StoredResponse stored() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put(CONTENT_TYPE, List.of(contentType));
        if (location != null) {
            headers.put(LOCATION, List.of(location));
        }
        return new StoredResponse(status, headers, body);
    }

    /** The same answer, not to be recorded by the hot tier. */
    public ApiResponse notRecordable() {
        return new ApiResponse(status, contentType, location, body, replayed, false, retryAfter);
    }

    /** The same answer with a {@code Retry-After}. */
    public ApiResponse withRetryAfter(Duration after) {
        return new ApiResponse(status, contentType, location, body, replayed, recordable, after);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ApiResponse other
                && status == other.status
                && contentType.equals(other.contentType)
                && java.util.Objects.equals(location, other.location)
                && java.util.Arrays.equals(body, other.body)
                && replayed == other.replayed
                && recordable == other.recordable
                && java.util.Objects.equals(retryAfter, other.retryAfter);
    }

    @Override
    public int hashCode() {
        return 31 * status + java.util.Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "ApiResponse[" + status + " " + contentType + ", " + body.length + " bytes"
                + (replayed ? ", replayed" : "") + "]";
    }
}
