package dev.exactly.payments.api;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.payments.json.FieldError;
import dev.exactly.payments.web.ApiException;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** Turning {@link ApiResponse}s into HTTP, and reading the idempotency key and query parameters. */
final class Http {
    private static final String NON_NEGATIVE = "must be a non-negative integer";

    private Http() {}

    /**
     * The response entity of an answer: its exact bytes, its media type, {@code Location},
     * {@code Retry-After}, the replay markers; an answer that is not an outcome is marked so that the hot
     * tier does not record it.
     */
    static ResponseEntity<byte[]> entity(ApiResponse answer, HttpServletRequest request) {
        markUnrecordable(answer, request);
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.parseMediaType(answer.contentType()));
        headers(answer, headers::set);
        return ResponseEntity.status(answer.status()).headers(headers).body(answer.body());
    }

    /**
     * Writes an answer onto the response as {@link #entity} would have it written (status, media type,
     * the same headers, {@code Content-Length}, the exact bytes, flushed), without Spring MVC's return
     * value handling and message converters: for the idempotent POST endpoints, where that was a tenth of
     * the request's work outside the action. Exceptions still go to {@link ApiExceptionHandler}.
     */
    static void send(ApiResponse answer, HttpServletRequest request, HttpServletResponse response) throws IOException {
        markUnrecordable(answer, request);
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        headers(answer, response::setHeader);
        byte[] body = answer.body();
        response.setContentLength(body.length);
        ServletOutputStream out = response.getOutputStream();
        out.write(body);
        out.flush();
    }

    private static void markUnrecordable(ApiResponse answer, HttpServletRequest request) {
        if (!answer.recordable()) {
            request.setAttribute(IdempotencyFilter.DO_NOT_RECORD, true);
        }
    }

    /** The answer's headers other than its media type. */
    private static void headers(ApiResponse answer, BiConsumer<String, String> header) {
        if (answer.location() != null) {
            header.accept(HttpHeaders.LOCATION, answer.location());
        }
        Duration retryAfter = answer.retryAfter();
        if (retryAfter != null) {
            header.accept(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000)));
        }
        if (answer.replayed()) {
            header.accept(IdempotencyFilter.REPLAYED_HEADER, "true");
            header.accept(IdempotencyFilter.LEGACY_REPLAYED_HEADER, "true");
        }
    }

    /** The longest request body read: the idempotency fingerprint's limit. */
    static final int MAX_BODY_BYTES = Fingerprinter.DEFAULT_MAX_BODY_BYTES;

    /**
     * The request body of a JSON endpoint: declared {@code application/json} (or {@code +json}), else
     * 415 (not recorded, so the client may fix the header and retry with the same key). An empty body of
     * no declared type passes, for the validator to report as missing.
     */
    static byte[] jsonBody(HttpServletRequest request) {
        refuseContentCoding(request);
        byte[] body = body(request);
        String type = request.getContentType();
        if (!Fingerprinter.isJson(type) && (type != null || body.length > 0)) {
            throw new ApiException(ApiProblems.response(Problems.unsupportedMediaType(
                            "this endpoint accepts 'Content-Type: application/json' only (got "
                                    + (type == null ? "none" : "'" + printable(type.strip()) + "'") + ")"))
                    .notRecordable());
        }
        return body;
    }

    /**
     * 415 for a body sent with a content coding (RFC 9110, section 8.4: {@code Content-Encoding: gzip}, ...):
     * the API reads bodies as sent, so a compressed one would be refused as invalid JSON, which tells the
     * client to fix a body that is fine; {@code Accept-Encoding: identity} names what it takes (section
     * 15.5.16). Not recorded: the same key with the body sent plain runs.
     */
    private static void refuseContentCoding(HttpServletRequest request) {
        for (String value : Collections.list(request.getHeaders(HttpHeaders.CONTENT_ENCODING))) {
            for (String coding : value.split(",", -1)) {
                String name = coding.strip();
                if (!name.isEmpty() && !name.equalsIgnoreCase("identity")) {
                    throw new ApiException(
                            ApiProblems.response(Problems.unsupportedMediaType(
                                            "this endpoint reads request bodies without a content coding (got 'Content-Encoding: "
                                                    + printable(value.strip()) + "'): send the body uncompressed"))
                                    .notRecordable(),
                            java.util.Map.of(HttpHeaders.ACCEPT_ENCODING, "identity"));
                }
            }
        }
    }

    /** A header value as a problem's detail may quote it: printable ASCII, at most 100 characters. */
    private static String printable(String value) {
        String shown = value.length() > 100 ? value.substring(0, 100) + "..." : value;
        return shown.replaceAll("[^ -~]", "?");
    }

    /** The raw request body, bounded by the fingerprint limit (413 beyond it). */
    private static byte[] body(HttpServletRequest request) {
        try (java.io.InputStream in = request.getInputStream()) {
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            if (body.length > MAX_BODY_BYTES) {
                throw new ApiException(ApiProblems.idempotency(Problems.payloadTooLarge(MAX_BODY_BYTES), null));
            }
            return body;
        } catch (java.io.IOException e) {
            throw new ApiException(ApiProblems.unreadableBody());
        }
    }

    /** The request's idempotency key (either header; both must agree). */
    static IdempotencyKey key(HttpServletRequest request) {
        List<String> values = new ArrayList<>(Collections.list(request.getHeaders(IdempotencyFilter.KEY_HEADER)));
        values.addAll(Collections.list(request.getHeaders(IdempotencyFilter.KEY_ALIAS_HEADER)));
        return IdempotencyKey.parse(values);
    }

    /**
     * A query parameter as given: null when it is absent; refused when it is present and empty ({@code ?after=}),
     * with {@code rule}, what a value must be. An empty value is not taken for an absent one: a client that put an
     * unset variable in its query ({@code ?after=${cursor}}) would get the first page again for every page, or the
     * whole list for a filter, an answer to another question than the one it meant to ask.
     */
    static @Nullable String given(@Nullable String value, String name, String rule) {
        if (value != null && value.isEmpty()) {
            throw invalidParam(name, rule + " (it was given empty: leave the parameter out for its default)");
        }
        return value;
    }

    /** A bounded integer query parameter: {@code fallback} when absent, refused when empty or out of bounds. */
    static int intParam(@Nullable String value, String name, int fallback, int min, int max) {
        String rule = "must be an integer between " + min + " and " + max;
        if (given(value, name, rule) == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw invalidParam(name, rule);
    }

    /** A non-negative long query parameter: 0 when absent, refused when empty or negative. */
    static long longParam(@Nullable String value, String name) {
        if (given(value, name, NON_NEGATIVE) == null) {
            return 0;
        }
        try {
            long n = Long.parseLong(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw invalidParam(name, NON_NEGATIVE);
    }

    static ApiException invalidParam(String name, String rule) {
        return new ApiException(ApiProblems.validationFailed(
                "invalid query parameter " + name,
                List.of(new FieldError(name, "parameter_invalid", name + " " + rule))));
    }
}
