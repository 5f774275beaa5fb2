package dev.exactly.payments.web;

/**
 * Ends a request with a ready answer (a validation failure, a missing resource, a refused caller).
 * Carries no stack trace: it is an expected outcome, not a fault.
 */
public final class ApiException extends RuntimeException {
    private final transient ApiResponse response;

    public ApiException(ApiResponse response) {
        super("HTTP " + response.status(), null, false, false);
        this.response = response;
    }

    public ApiResponse response() {
        return response;
    }
}
