package dev.exactly.benchmarks.http;

import dev.exactly.idempotency.servlet.IdempotencyFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The trivial JSON endpoint: reads the request body and answers 201 with a small charge document that
 * names the request's key ({@code reference}), so that the load script can tell whose answer it got.
 * Every execution is recorded in {@link Executions}.
 */
final class ChargeServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final transient Executions executions;

    ChargeServlet(Executions executions) {
        this.executions = executions;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String key = readRequest(request, response);
        if (key != null) {
            write(response, 201, charge(executions.record(key), key));
        }
    }

    /**
     * Reads the body and returns the request's key; answers 400 and returns null without both. A body of
     * declared length is read into an array of that length, as the idempotency filter reads it: every floor
     * (the unguarded and the raw endpoints) reads its body here straight from the container, and
     * {@code readAllBytes} there allocated 16 KB a request and cost the unguarded endpoint 6.8 µs of the
     * JVM's CPU a request that the guarded endpoints, whose handler reads the filter's copy, did not pay.
     */
    static @Nullable String readRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = readBody(request);
        String key = request.getHeader(IdempotencyFilter.KEY_HEADER);
        if (body.length == 0 || key == null) {
            response.sendError(400);
            return null;
        }
        return key;
    }

    private static byte[] readBody(HttpServletRequest request) throws IOException {
        int declared = request.getContentLength();
        InputStream in = request.getInputStream();
        if (declared < 0) {
            return in.readAllBytes();
        }
        byte[] body = new byte[declared];
        int read = in.readNBytes(body, 0, declared);
        return read == declared ? body : Arrays.copyOf(body, read);
    }

    /** The handler's answer for the {@code id}-th execution, of {@code key}. */
    static byte[] charge(long id, String key) {
        return ("{\"id\":\"ch_" + id + "\",\"reference\":\"" + key
                        + "\",\"status\":\"succeeded\",\"amount\":1999,\"currency\":\"EUR\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static void write(HttpServletResponse response, int status, byte[] json) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setContentLength(json.length);
        response.getOutputStream().write(json);
    }
}
