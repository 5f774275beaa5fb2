package dev.exactly.payments.web;

import java.util.Map;

/**
 * Ends a request with a ready answer (a validation failure, a missing resource, a refused caller).
 * Carries no stack trace: it is an expected outcome, not a fault.
 */
public final class ApiException extends RuntimeException {
    private final transient ApiResponse response;
    private final transient Map<String, String> headers;

    public ApiException(ApiResponse response) {
        this(response, Map.of());
    }

    /** An answer with headers of its own besides those of every answer (e.g. {@code Accept-Encoding} of a 415). */
    public ApiException(ApiResponse response, Map<String, String> headers) {
        super("HTTP " + response.status(), null, false, false);
        this.response = response;
        this.headers = Map.copyOf(headers);
    }

    public ApiResponse response() {
        return response;
    }

    /** The answer's own headers, by name. */
    public Map<String, String> headers() {
        return headers;
    }
}
