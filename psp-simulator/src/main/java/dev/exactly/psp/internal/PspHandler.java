package dev.exactly.psp.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.DeclineRule;
import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultKind;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** The simulator's HTTP API: routing, the charge pipeline with its faults, lookups and admin. */
public final class PspHandler implements HttpHandler {

    /** Header marking a replayed answer. */
    public static final String REPLAYED = "Idempotent-Replayed";
    /** Header listing the faults that fired on an answer. */
    public static final String FAULT_FIRED = "Psp-Fault-Fired";

    private static final String CHARGES = "/v1/charges";
    private static final String BY_KEY = "/v1/charges/by-key/";
    private static final String ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    private final ChargeBook book;
    private final FaultInjector faults;
    private final Counters counters;
    private final InstantSource clock;
    private final int maxBodyBytes;
    private final CountDownLatch closing;

    /**
     * @param closing counted down when the simulator closes: every delay and hang ends at once
     */
    public PspHandler(ChargeBook book, FaultInjector faults, Counters counters, InstantSource clock, int maxBodyBytes,
            CountDownLatch closing) {
        this.book = book;
        this.faults = faults;
        this.counters = counters;
        this.clock = clock;
        this.maxBodyBytes = maxBodyBytes;
        this.closing = closing;
    }

    /** A response that ends request handling. */
    private static final class Reply extends RuntimeException {
        final int status;
        final JsonValue body;

        Reply(int status, JsonValue body) {
            super(null, null, false, false);
            this.status = status;
            this.body = body;
        }
    }

    private static Reply invalid(String code, String message) {
        return new Reply(400, Wire.error("invalid_request_error", code, message));
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try (ex) {
            try {
                route(ex);
            } catch (Reply r) {
                send(ex, r.status, r.body);
            } catch (Wire.WireException e) {
                send(ex, 400, Wire.error("invalid_request_error", e.code(), e.getMessage()));
            } catch (RuntimeException e) {
                send(ex, 500, Wire.error("api_error", "internal_error", String.valueOf(e)));
            }
        }
    }

    private void route(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        switch (path) {
            case "/health" -> {
                allow(ex, "GET");
                send(ex, 200, JsonValue.object().put("status", "ok").build());
            }
            case CHARGES -> {
                allow(ex, "GET", "POST");
                if (method.equals("POST")) {
                    charge(ex);
                } else {
                    String key = queryParameter(ex, "idempotency_key");
                    if (key == null) {
                        throw invalid("parameter_missing", "missing required parameter: idempotency_key");
                    }
                    sendCharge(ex, book.byKey(key), "no charge with idempotency key " + key);
                }
            }
            case "/v1/captures" -> {
                allow(ex, "GET");
                send(ex, 200, Wire.captures(book.captures()));
            }
            case "/v1/stats" -> {
                allow(ex, "GET");
                send(ex, 200, Wire.stats(counters.snapshot()));
            }
            case "/v1/faults" -> {
                allow(ex, "GET", "POST", "DELETE");
                switch (method) {
                    case "POST" -> faults.set(Wire.readFaultSettings(readJson(ex)));
                    case "DELETE" -> faults.clear();
                    default -> { }
                }
                send(ex, 200, Wire.faultSettings(faults.settings(), faults.pending()));
            }
            case "/v1/faults/next" -> {
                allow(ex, "POST");
                Wire.NextFaults next = Wire.readNextFaults(readJson(ex));
                faults.enqueue(next.count(), parseFaults(next.faults()));
                send(ex, 200, Wire.faultSettings(faults.settings(), faults.pending()));
            }
            default -> {
                if (path.startsWith(BY_KEY) && path.length() > BY_KEY.length()) {
                    allow(ex, "GET");
                    String key = path.substring(BY_KEY.length());
                    sendCharge(ex, book.byKey(key), "no charge with idempotency key " + key);
                } else if (path.startsWith(CHARGES + "/") && path.indexOf('/', CHARGES.length() + 1) < 0) {
                    allow(ex, "GET");
                    String id = path.substring(CHARGES.length() + 1);
                    sendCharge(ex, book.byId(id), "no charge with id " + id);
                } else {
                    throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", "no route " + path));
                }
            }
        }
    }

    // ---------------------------------------------------------------- POST /v1/charges

    private void charge(HttpExchange ex) throws IOException {
        counters.requests.increment();
        String key;
        PspChargeRequest request;
        List<Fault> requestFaults;
        try {
            key = idempotencyKey(ex);
            request = Wire.readChargeRequest(readJson(ex));
            String header = ex.getRequestHeaders().getFirst(Fault.HEADER);
            requestFaults = header == null ? List.of() : parseFaults(header);
        } catch (Reply | Wire.WireException e) {
            counters.rejected.increment();
            throw e;
        }
        FaultInjector.Plan plan = faults.plan(requestFaults);
        StringBuilder fired = new StringBuilder();

        if (!plan.latency().isZero()) {
            fire(FaultKind.LATENCY, fired);
            if (!pause(plan.latency())) {
                return; // closing
            }
        }
        if (plan.errorStatus() != 0) {
            fire(FaultKind.ERROR, fired);
            ex.getResponseHeaders().set(FAULT_FIRED, fired.toString());
            throw new Reply(plan.errorStatus(),
                    Wire.error("api_error", "processing_error", "injected fault: error before capture"));
        }
        if (plan.timeout() != null) {
            fire(FaultKind.TIMEOUT, fired);
            hangThen504(ex, plan.timeout(), fired, "injected fault: timeout before capture");
            return;
        }

        String fingerprint = Hashing.sha256Hex(Json.writeCanonical(Wire.chargeRequest(request)));
        ChargeBook.Outcome outcome = book.chargeOnce(key, fingerprint, () -> decide(key, fingerprint, request, plan));
        switch (outcome) {
            case ChargeBook.KeyReused reused -> {
                counters.rejected.increment();
                throw new Reply(422, Wire.error("idempotency_error", "idempotency_key_reused",
                        "idempotency key " + key + " was already used with a different request"));
            }
            case ChargeBook.Replayed replayed -> {
                counters.replays.increment();
                ex.getResponseHeaders().set(REPLAYED, "true");
            }
            case ChargeBook.Created created -> {
                if (created.entry().charge().captured()) {
                    counters.captures.increment();
                } else {
                    counters.declines.increment();
                }
            }
        }

        if (plan.timeoutAfter() != null) {
            fire(FaultKind.TIMEOUT_AFTER_CAPTURE, fired);
            hangThen504(ex, plan.timeoutAfter(), fired, "injected fault: timeout after capture");
            return;
        }
        if (plan.dropResponse()) {
            fire(FaultKind.DROP_RESPONSE, fired);
            return; // the exchange closes without a response: the client sees the connection drop
        }
        if (!fired.isEmpty()) {
            ex.getResponseHeaders().set(FAULT_FIRED, fired.toString());
        }
        ChargeBook.Entry entry = outcome.entry();
        sendBytes(ex, entry.status(), entry.body());
    }

    /** Runs inside the key's atomic section: decide captured or declined and render the answer. */
    private ChargeBook.Entry decide(String key, String fingerprint, PspChargeRequest request, FaultInjector.Plan plan) {
        String declineCode = plan.decline();
        boolean injected = declineCode != null;
        if (declineCode == null) {
            declineCode = firstMatch(plan.declineRules(), request);
            injected = declineCode != null;
        }
        if (declineCode == null) {
            declineCode = firstMatch(DeclineRule.TEST_CARDS, request);
        }
        if (injected) {
            counters.fired(FaultKind.DECLINE);
        }
        PspCharge charge = new PspCharge(newId(), request.amount(), request.currency(),
                declineCode == null ? ChargeStatus.CAPTURED : ChargeStatus.DECLINED, key, declineCode,
                clock.instant().truncatedTo(ChronoUnit.SECONDS), request.source(), request.description(),
                request.metadata());
        byte[] body = Json.write(Wire.charge(charge)).getBytes(StandardCharsets.UTF_8);
        return new ChargeBook.Entry(fingerprint, charge, charge.captured() ? 200 : 402, body);
    }

    private static @Nullable String firstMatch(List<DeclineRule> rules, PspChargeRequest request) {
        for (DeclineRule rule : rules) {
            if (rule.matches(request)) {
                return rule.code();
            }
        }
        return null;
    }

    private void hangThen504(HttpExchange ex, Duration hold, StringBuilder fired, String message) throws IOException {
        if (!pause(hold)) {
            return; // closing: drop the connection
        }
        ex.getResponseHeaders().set(FAULT_FIRED, fired.toString());
        send(ex, 504, Wire.error("api_error", "processor_timeout", message));
    }

    private void fire(FaultKind kind, StringBuilder fired) {
        counters.fired(kind);
        if (!fired.isEmpty()) {
            fired.append(", ");
        }
        fired.append(kind.wireName());
    }

    /** Waits, ending early when the simulator closes; false when it is closing. */
    private boolean pause(Duration d) {
        try {
            return !closing.await(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String newId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        StringBuilder id = new StringBuilder("py_");
        for (int i = 0; i < 24; i++) {
            id.append(ID_ALPHABET.charAt(r.nextInt(ID_ALPHABET.length())));
        }
        return id.toString();
    }

    // ---------------------------------------------------------------- request parsing

    private static String idempotencyKey(HttpExchange ex) {
        List<String> values = ex.getRequestHeaders().get("Idempotency-Key");
        if (values == null || values.isEmpty()) {
            throw invalid("idempotency_key_missing", "the Idempotency-Key header is required");
        }
        if (values.size() > 1) {
            throw invalid("idempotency_key_invalid", "send exactly one Idempotency-Key header");
        }
        String key = values.get(0);
        if (!Checks.validKey(key)) {
            throw invalid("idempotency_key_invalid", "Idempotency-Key must be 1-255 printable ASCII characters");
        }
        return key;
    }

    private static List<Fault> parseFaults(String spec) {
        try {
            return Fault.parseHeader(spec);
        } catch (IllegalArgumentException e) {
            throw invalid("fault_invalid", e.getMessage());
        }
    }

    private JsonValue readJson(HttpExchange ex) throws IOException {
        byte[] bytes = ex.getRequestBody().readNBytes(maxBodyBytes + 1);
        if (bytes.length > maxBodyBytes) {
            throw new Reply(413, Wire.error("invalid_request_error", "body_too_large",
                    "the request body exceeds " + maxBodyBytes + " bytes"));
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw invalid("invalid_json", "the request body is not valid UTF-8");
        }
        try {
            return Json.parse(text);
        } catch (JsonException e) {
            throw invalid("invalid_json", e.getMessage());
        }
    }

    private static @Nullable String queryParameter(HttpExchange ex, String name) {
        String query = ex.getRequestURI().getRawQuery();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String n = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (n.equals(name)) {
                return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private static void allow(HttpExchange ex, String... allowed) {
        String method = ex.getRequestMethod();
        for (String a : allowed) {
            if (a.equals(method)) {
                return;
            }
        }
        ex.getResponseHeaders().set("Allow", String.join(", ", allowed));
        throw new Reply(405, Wire.error("invalid_request_error", "method_not_allowed",
                method + " not allowed; use " + String.join(", ", allowed)));
    }

    // ---------------------------------------------------------------- responses

    private static void sendCharge(HttpExchange ex, Optional<PspCharge> charge, String missing) throws IOException {
        if (charge.isEmpty()) {
            throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", missing));
        }
        send(ex, 200, Wire.charge(charge.get()));
    }

    private static void send(HttpExchange ex, int status, JsonValue body) throws IOException {
        sendBytes(ex, status, Json.write(body).getBytes(StandardCharsets.UTF_8));
    }

    private static void sendBytes(HttpExchange ex, int status, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, body.length);
        ex.getResponseBody().write(body);
    }
}
