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
 * ({@link RawBaseline#read}, one round trip) and sends it marked as a replay, as the filter does. In the
 * mixed mix it is told which a request is ({@value #REPLAY_HEADER}, sent by the load script), which no guard
 * is: the floor of a mix is what each kind's least round trips cost together.
 */
final class RawServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final byte[] CONFLICT = "{\"error\":\"key already claimed\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NOT_FOUND = "{\"error\":\"no stored answer\"}".getBytes(StandardCharsets.UTF_8);

    /** Sent by the load script on a replay of the mixed mix, for the raw floor only. */
    static final String REPLAY_HEADER = "X-Bench-Replay";

    /** Which requests an endpoint takes for replays. */
    enum Kind {
        /** None: every request a fresh key. */
        FRESH,
        /** All of them. */
        REPLAYS,
        /** Those the load script says are ({@value #REPLAY_HEADER}). */
        TOLD
    }

    private final transient RawBaseline raw;
    private final transient Executions executions;
    private final Kind kind;

    RawServlet(RawBaseline raw, Executions executions, Kind kind) {
        this.raw = raw;
        this.executions = executions;
        this.kind = kind;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String key = ChargeServlet.readRequest(request, response);
        if (key == null) {
            return;
        }
        boolean replay = switch (kind) {
            case FRESH -> false;
            case REPLAYS -> true;
            case TOLD -> "1".equals(request.getHeader(REPLAY_HEADER));
        };
        if (replay) {
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
