package dev.exactly.idempotency.servlet;

import jakarta.servlet.http.Cookie;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a handler produced on a guarded route.
 *
 * @param status    the final status
 * @param headers   every header the handler set (names as the handler spelled them), including
 *                  {@code Content-Type}; never {@code Content-Length}
 * @param cookies   cookies added with {@code addCookie} (sent to this caller only, never stored)
 * @param body      the body, or {@code null} when it outgrew the capture limit and was streamed through
 * @param bodyBytes the body's length in bytes
 */
record CapturedResponse(
        int status, List<Header> headers, List<Cookie> cookies, byte @Nullable [] body, long bodyBytes) {

    /** One header and its values, in the order they were set. */
    record Header(String name, List<String> values) {}

    boolean streamed() {
        return body == null;
    }

    @Nullable
    String contentType() {
        for (Header header : headers) {
            if (header.name().equalsIgnoreCase("Content-Type")) {
                return header.values().getFirst();
            }
        }
        return null;
    }
}
