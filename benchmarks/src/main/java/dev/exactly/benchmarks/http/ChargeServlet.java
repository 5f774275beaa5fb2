package dev.exactly.benchmarks.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The trivial JSON endpoint: reads the request body and answers 201 with a small charge document. It
 * counts how often it ran, so that the benchmark can check that no guarded key ran twice.
 */
final class ChargeServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final AtomicLong executions = new AtomicLong();

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = request.getInputStream().readAllBytes();
        if (body.length == 0) {
            response.sendError(400);
            return;
        }
        long id = executions.incrementAndGet();
        byte[] json = ("{\"id\":\"ch_" + id + "\",\"status\":\"succeeded\",\"amount\":1999,\"currency\":\"EUR\"}")
                .getBytes(StandardCharsets.UTF_8);
        response.setStatus(201);
        response.setContentType("application/json");
        response.setContentLength(json.length);
        response.getOutputStream().write(json);
    }

    long executions() {
        return executions.get();
    }
}
