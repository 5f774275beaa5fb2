package dev.exactly.payments.security;

import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;

/** Writes an answer straight onto a response, for refusals made before any controller runs. */
public final class ProblemWriter {
    private ProblemWriter() {}

    public static void write(HttpServletResponse response, ApiResponse answer) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        response.resetBuffer();
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        response.setHeader("Cache-Control", "no-store");
        Duration retryAfter = answer.retryAfter();
        if (retryAfter != null) {
            response.setHeader("Retry-After", Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000)));
        }
        byte[] body = answer.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }
}
