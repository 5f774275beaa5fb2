package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.store.RawBaseline;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A raw baseline endpoint, the physical floor of a guard on one server: for a fresh key it claims a
 * placeholder ({@link RawBaseline#claim}, one round trip; a key that exists is answered 409 and the
 * handler does not run), runs the same handler as {@link ChargeServlet} and stores its answer
 * ({@link RawBaseline#finish}, the second round trip); for a replay it reads the stored answer
 * ({@link RawBaseline#read}, one round trip) and sends it marked as a replay, as the filter does.
 */
final class RawServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final byte[] CONFLICT = "{\"error\":\"key already claimed\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NOT_FOUND = "{\"error\":\"no stored answer\"}".getBytes(StandardCharsets.UTF_8);

    private final transient RawBaseline raw;
    private final transient Executions executions;
    private final boolean replays;

    /** @param replays whether this endpoint answers replays (one read) rather than fresh keys */
    RawServlet(RawBaseline raw, Executions executions, boolean replays) {
        this.raw = raw;
        this.executions = executions;
        this.replays = replays;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String key = ChargeServlet.readRequest(request, response);
        if (key == null) {
            return;
        }
        if (replays) {
            byte[] stored = raw.read(key);
            if (stored == null) {
                ChargeServlet.write(response, 404, NOT_FOUND);
                return;
            }
            response.setHeader(IdempotencyFilter.REPLAYED_HEADER, "true");
            response.setHeader(IdempotencyFilter.LEGACY_REPLAYED_HEADER, "true");
            ChargeServlet.write(response, 201, stored);
            return;
        }
        if (!raw.claim(key)) {
            ChargeServlet.write(response, 409, CONFLICT);
            return;
        }
        byte[] json = ChargeServlet.charge(executions.record(key), key);
        if (!raw.finish(key, json)) {
            throw new IllegalStateException("the claimed key " + key + " vanished before its answer was stored");
        }
        ChargeServlet.write(response, 201, json);
    }
}
