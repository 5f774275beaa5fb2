package dev.exactly.psp.internal;

import dev.exactly.psp.Capture;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.DeclineRule;
import dev.exactly.psp.Fault;
import dev.exactly.psp.FaultKind;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspRefund;
import dev.exactly.psp.PspRefundRequest;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The simulator's HTTP API: routing, one pipeline with faults for every operation (charge, capture,
 * void, refund), lookups, logs, admin and the test-only planting endpoints.
 */
public final class PspHandler implements Http1Server.Handler {

    /** Header marking a replayed answer. */
    public static final String REPLAYED = "Idempotent-Replayed";
    /** Header listing the faults that fired on an answer. */
    public static final String FAULT_FIRED = "Psp-Fault-Fired";

    private static final String CHARGES = "/v1/charges";
    private static final String BY_KEY = "/v1/charges/by-key/";
    private static final String REFUNDS = "/v1/refunds";
    private static final String REFUNDS_BY_KEY = "/v1/refunds/by-key/";
    private static final String ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    private final ChargeBook book;
    private final FaultInjector faults;
    private final Counters counters;
    private final int maxBodyBytes;
    private final CountDownLatch closing;

    /**
     * @param closing counted down when the simulator closes: every delay and hang ends at once
     */
    public PspHandler(
            ChargeBook book, FaultInjector faults, Counters counters, int maxBodyBytes, CountDownLatch closing) {
        this.book = book;
        this.faults = faults;
        this.counters = counters;
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
    public void handle(Exchange ex) throws IOException {
        try {
            route(ex);
        } catch (Reply r) {
            send(ex, r.status, r.body);
        } catch (Wire.WireException e) {
            send(ex, 400, Wire.error("invalid_request_error", e.code(), Wire.messageOf(e)));
        } catch (RuntimeException e) {
            send(ex, 500, Wire.error("api_error", "internal_error", String.valueOf(e)));
        }
    }

    private void route(Exchange ex) throws IOException {
        String path = ex.uri().getPath();
        String method = ex.method();
        switch (path) {
            case "/health" -> {
                allow(ex, "GET");
                send(ex, 200, JsonValue.object().put("status", "ok").build());
            }
            case CHARGES -> {
                allow(ex, "GET", "POST");
                if (method.equals("POST")) {
                    operation(ex, PspOperation.CHARGE, this::charge);
                } else {
                    String key = requiredQuery(ex, "idempotency_key");
                    sendCharge(ex, book.chargeByKey(key), "no charge with idempotency key " + key);
                }
            }
            case REFUNDS -> {
                allow(ex, "GET", "POST");
                if (method.equals("POST")) {
                    operation(ex, PspOperation.REFUND, this::refund);
                } else {
                    String key = queryParameter(ex, "idempotency_key");
                    if (key != null) {
                        sendRefund(ex, book.refundByKey(key), "no refund with idempotency key " + key);
                    } else {
                        send(ex, 200, Wire.refunds(book.refunds(instantQuery(ex, "from"), instantQuery(ex, "to"))));
                    }
                }
            }
            case "/v1/captures" -> {
                allow(ex, "GET");
                send(ex, 200, Wire.captures(book.captures(instantQuery(ex, "from"), instantQuery(ex, "to"))));
            }
            case "/v1/stats" -> {
                allow(ex, "GET");
                send(ex, 200, Wire.stats(counters.snapshot()));
            }
            case "/v1/faults" -> {
                allow(ex, "GET", "POST", "DELETE");
                switch (method) {
                    case "POST" -> faults.set(Wire.readFaultSettings(readJson(ex, false)));
                    case "DELETE" -> faults.clear();
                    default -> {}
                }
                send(ex, 200, Wire.faultSettings(faults.settings(), faults.pending()));
            }
            case "/v1/faults/next" -> {
                allow(ex, "POST");
                Wire.NextFaults next = Wire.readNextFaults(readJson(ex, false));
                faults.enqueue(next.operation(), next.count(), parseFaults(next.faults()));
                send(ex, 200, Wire.faultSettings(faults.settings(), faults.pending()));
            }
            case "/v1/test/plant-capture" -> {
                allow(ex, "POST");
                Wire.PlantedCapture planted = Wire.readPlantedCapture(readJson(ex, false));
                try {
                    send(ex, 200, Wire.charge(book.plantCapture(newId("py_"), planted.key(), planted.request())));
                } catch (IllegalStateException e) {
                    throw keyReused(Wire.messageOf(e));
                }
            }
            case "/v1/test/plant-refund" -> {
                allow(ex, "POST");
                Wire.PlantedRefund planted = Wire.readPlantedRefund(readJson(ex, false));
                try {
                    PspRefund refund = book.plantRefund(newId("re_"), planted.key(), planted.request());
                    send(ex, refund.succeeded() ? 200 : 402, Wire.refund(refund));
                } catch (IllegalStateException e) {
                    throw keyReused(Wire.messageOf(e));
                }
            }
            case "/v1/test/amend-capture" -> {
                allow(ex, "POST");
                Wire.CaptureChange change = Wire.readCaptureChange(readJson(ex, false), true);
                sendCapture(ex, book.amendCapture(change.chargeId(), change.amount()), change.chargeId());
            }
            case "/v1/test/remove-capture" -> {
                allow(ex, "POST");
                Wire.CaptureChange change = Wire.readCaptureChange(readJson(ex, false), false);
                sendCapture(ex, book.removeCapture(change.chargeId()), change.chargeId());
            }
            default -> routePrefixed(ex, path);
        }
    }

    private void routePrefixed(Exchange ex, String path) throws IOException {
        if (path.startsWith(BY_KEY) && path.length() > BY_KEY.length()) {
            allow(ex, "GET");
            String key = path.substring(BY_KEY.length());
            sendCharge(ex, book.chargeByKey(key), "no charge with idempotency key " + key);
        } else if (path.startsWith(REFUNDS_BY_KEY) && path.length() > REFUNDS_BY_KEY.length()) {
            allow(ex, "GET");
            String key = path.substring(REFUNDS_BY_KEY.length());
            sendRefund(ex, book.refundByKey(key), "no refund with idempotency key " + key);
        } else if (path.startsWith(REFUNDS + "/") && path.indexOf('/', REFUNDS.length() + 1) < 0) {
            allow(ex, "GET");
            String id = path.substring(REFUNDS.length() + 1);
            sendRefund(ex, book.refundById(id), "no refund with id " + id);
        } else if (path.startsWith(CHARGES + "/")) {
            String rest = path.substring(CHARGES.length() + 1);
            int slash = rest.indexOf('/');
            if (slash < 0 && !rest.isEmpty()) {
                allow(ex, "GET");
                sendCharge(ex, book.chargeById(rest), "no charge with id " + rest);
                return;
            }
            String id = slash < 0 ? "" : rest.substring(0, slash);
            String action = slash < 0 ? "" : rest.substring(slash + 1);
            if (!id.isEmpty() && action.equals("capture")) {
                allow(ex, "POST");
                operation(ex, PspOperation.CAPTURE, json -> capture(id, json));
            } else if (!id.isEmpty() && action.equals("void")) {
                allow(ex, "POST");
                operation(ex, PspOperation.VOID, json -> voidHold(id, json));
            } else {
                throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", "no route " + path));
            }
        } else {
            throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", "no route " + path));
        }
    }

    // ---------------------------------------------------------------- the pipeline of every operation

    /** A valid request of an operation: its fingerprint, and how it decides (at most once per key). */
    private record Parsed(String fingerprint, Decision decision) {}

    /** Runs inside the key's atomic section: decide, count what moved, render the answer. */
    @FunctionalInterface
    private interface Decision {
        ChargeBook.Entry decide(String key, FaultInjector.Plan plan);
    }

    /** Reads and validates an operation's body (a {@link Wire.WireException} or {@link Reply} when invalid). */
    @FunctionalInterface
    private interface Reader {
        Parsed read(JsonValue body);
    }

    /**
     * One request of an operation: validate (4xx, not recorded), latency, error, timeout, then decide
     * once per key or replay, then the faults after the commit.
     */
    private void operation(Exchange ex, PspOperation op, Reader reader) throws IOException {
        Counters.Of count = counters.of(op);
        count.requests.increment();
        String key;
        Parsed parsed;
        List<Fault> requestFaults;
        try {
            key = idempotencyKey(ex);
            parsed = reader.read(readJson(ex, op == PspOperation.CAPTURE || op == PspOperation.VOID));
            String header = ex.header(Fault.HEADER);
            requestFaults = header == null ? List.of() : parseFaults(header);
        } catch (Reply | Wire.WireException e) {
            count.rejected.increment();
            throw e;
        }
        FaultInjector.Plan plan = faults.plan(op, requestFaults);
        StringBuilder fired = new StringBuilder();
        String what = op == PspOperation.CHARGE ? "capture" : "the " + op.wireName();

        if (!plan.latency().isZero()) {
            fire(count, FaultKind.LATENCY, fired);
            if (!pause(plan.latency())) {
                return; // closing
            }
        }
        if (plan.errorStatus() != 0) {
            fire(count, FaultKind.ERROR, fired);
            ex.setHeader(FAULT_FIRED, fired.toString());
            throw new Reply(
                    plan.errorStatus(),
                    Wire.error("api_error", "processing_error", "injected fault: error before " + what));
        }
        if (plan.timeout() != null) {
            fire(count, FaultKind.TIMEOUT, fired);
            hangThen504(ex, plan.timeout(), fired, "injected fault: timeout before " + what);
            return;
        }

        ChargeBook.Outcome outcome = book.once(op, key, parsed.fingerprint(), () -> {
            if (plan.decline() != null) {
                count.fired(FaultKind.DECLINE);
            }
            return parsed.decision().decide(key, plan);
        });
        switch (outcome) {
            case ChargeBook.KeyReused reused -> {
                count.rejected.increment();
                throw keyReused("idempotency key " + key + " was already used with a different request");
            }
            case ChargeBook.Replayed replayed -> {
                count.replays.increment();
                ex.setHeader(REPLAYED, "true");
            }
            case ChargeBook.Created created -> {
                if (created.entry().status() < 300) {
                    count.succeeded.increment();
                } else {
                    count.refused.increment();
                }
            }
        }

        if (plan.timeoutAfter() != null) {
            fire(count, FaultKind.TIMEOUT_AFTER_CAPTURE, fired);
            hangThen504(ex, plan.timeoutAfter(), fired, "injected fault: timeout after " + what);
            return;
        }
        if (plan.dropResponse()) {
            fire(count, FaultKind.DROP_RESPONSE, fired);
            return; // the exchange closes without a response: the client sees the connection drop
        }
        if (!fired.isEmpty()) {
            ex.setHeader(FAULT_FIRED, fired.toString());
        }
        ChargeBook.Entry entry = outcome.entry();
        sendBytes(ex, entry.status(), entry.body());
    }

    private static Reply keyReused(String message) {
        return new Reply(422, Wire.error("idempotency_error", "idempotency_key_reused", message));
    }

    private static String fingerprint(JsonValue canonical) {
        return Hashing.sha256Hex(Json.writeCanonical(canonical));
    }

    private static ChargeBook.Entry entry(String fingerprint, int status, JsonValue body) {
        return new ChargeBook.Entry(fingerprint, status, Json.write(body).getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- the operations

    /** POST /v1/charges: capture at once or authorize; declined by an injected fault, a rule or a test card. */
    private Parsed charge(JsonValue body) {
        PspChargeRequest request = Wire.readChargeRequest(body);
        String fingerprint = fingerprint(Wire.chargeRequest(request));
        return new Parsed(fingerprint, (key, plan) -> {
            String declineCode = plan.decline();
            if (declineCode == null) {
                declineCode = firstMatch(plan.declineRules(), request);
                if (declineCode != null) {
                    counters.of(PspOperation.CHARGE).fired(FaultKind.DECLINE);
                }
            }
            if (declineCode == null) {
                declineCode = firstMatch(DeclineRule.TEST_CARDS, request);
            }
            PspCharge charge = book.openCharge(newId("py_"), key, request, declineCode);
            if (charge.captured()) {
                counters.captures.increment();
            }
            return entry(fingerprint, charge.status() == ChargeStatus.DECLINED ? 402 : 200, Wire.charge(charge));
        });
    }

    /** POST /v1/charges/{id}/capture: capture a hold once, all of it or a part. */
    private Parsed capture(String chargeId, JsonValue body) {
        OptionalLong amount = Wire.readCaptureRequest(body);
        String fingerprint = fingerprint(JsonValue.object()
                .put("charge", chargeId)
                .put("capture", Wire.captureRequest(amount))
                .build());
        return new Parsed(fingerprint, (key, plan) -> {
            ChargeBook.HoldResult result = book.capture(chargeId, amount, key, plan.decline());
            if (result instanceof ChargeBook.Done) {
                counters.captures.increment();
            }
            return holdAnswer(fingerprint, result);
        });
    }

    /** POST /v1/charges/{id}/void: release a hold. */
    private Parsed voidHold(String chargeId, JsonValue body) {
        Wire.readVoidRequest(body);
        String fingerprint =
                fingerprint(JsonValue.object().put("charge", chargeId).build());
        return new Parsed(fingerprint, (key, plan) -> holdAnswer(fingerprint, book.voidHold(chargeId, plan.decline())));
    }

    private static ChargeBook.Entry holdAnswer(String fingerprint, ChargeBook.HoldResult result) {
        return switch (result) {
            case ChargeBook.Done done -> entry(fingerprint, 200, Wire.charge(done.charge()));
            case ChargeBook.Refused refused ->
                entry(fingerprint, 402, Wire.error("invalid_request_error", refused.code(), refused.message()));
        };
    }

    /** POST /v1/refunds: give back part of a captured charge, never more than was captured in total. */
    private Parsed refund(JsonValue body) {
        PspRefundRequest request = Wire.readRefundRequest(body);
        String fingerprint = fingerprint(Wire.refundRequest(request));
        return new Parsed(fingerprint, (key, plan) -> {
            PspRefund refund = book.refund(newId("re_"), key, request, plan.decline());
            return entry(fingerprint, refund.succeeded() ? 200 : 402, Wire.refund(refund));
        });
    }

    private static @Nullable String firstMatch(List<DeclineRule> rules, PspChargeRequest request) {
        for (DeclineRule rule : rules) {
            if (rule.matches(request)) {
                return rule.code();
            }
        }
        return null;
    }

    private void hangThen504(Exchange ex, Duration hold, StringBuilder fired, String message) throws IOException {
        if (!pause(hold)) {
            return; // closing: drop the connection
        }
        ex.setHeader(FAULT_FIRED, fired.toString());
        send(ex, 504, Wire.error("api_error", "processor_timeout", message));
    }

    private static void fire(Counters.Of count, FaultKind kind, StringBuilder fired) {
        count.fired(kind);
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

    /** A new processor id: the prefix ({@code py_}, {@code re_}) and 24 random letters and digits. */
    public static String newId(String prefix) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        StringBuilder id = new StringBuilder(prefix);
        for (int i = 0; i < 24; i++) {
            id.append(ID_ALPHABET.charAt(r.nextInt(ID_ALPHABET.length())));
        }
        return id.toString();
    }

    // ---------------------------------------------------------------- request parsing

    private static String idempotencyKey(Exchange ex) {
        List<String> values = ex.headers("Idempotency-Key");
        if (values.isEmpty()) {
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
            throw invalid("fault_invalid", Wire.messageOf(e));
        }
    }

    /** @param emptyIsObject whether an empty body reads as {@code {}} */
    private JsonValue readJson(Exchange ex, boolean emptyIsObject) throws IOException {
        byte[] bytes = ex.body().readNBytes(maxBodyBytes + 1);
        if (bytes.length > maxBodyBytes) {
            throw new Reply(
                    413,
                    Wire.error(
                            "invalid_request_error",
                            "body_too_large",
                            "the request body exceeds " + maxBodyBytes + " bytes"));
        }
        if (emptyIsObject && bytes.length == 0) {
            return JsonValue.object().build();
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
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
            throw invalid("invalid_json", Wire.messageOf(e));
        }
    }

    private static String requiredQuery(Exchange ex, String name) {
        String value = queryParameter(ex, name);
        if (value == null) {
            throw invalid("parameter_missing", "missing required parameter: " + name);
        }
        return value;
    }

    /** An ISO-8601 instant query parameter ({@code 2026-12-01T12:00:00Z}), or null when absent or empty. */
    private static @Nullable Instant instantQuery(Exchange ex, String name) {
        String value = queryParameter(ex, name);
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw invalid("parameter_invalid", name + " must be an ISO-8601 instant such as 2026-12-01T12:00:00Z");
        }
    }

    private static @Nullable String queryParameter(Exchange ex, String name) {
        String query = ex.uri().getRawQuery();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&", -1)) {
            int eq = pair.indexOf('=');
            String n = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (n.equals(name)) {
                return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private static void allow(Exchange ex, String... allowed) {
        String method = ex.method();
        for (String a : allowed) {
            if (a.equals(method)) {
                return;
            }
        }
        ex.setHeader("Allow", String.join(", ", allowed));
        throw new Reply(
                405,
                Wire.error(
                        "invalid_request_error",
                        "method_not_allowed",
                        method + " not allowed; use " + String.join(", ", allowed)));
    }

    // ---------------------------------------------------------------- responses

    private static void sendCharge(Exchange ex, Optional<PspCharge> charge, String missing) throws IOException {
        if (charge.isEmpty()) {
            throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", missing));
        }
        send(ex, 200, Wire.charge(charge.get()));
    }

    private static void sendCapture(Exchange ex, Optional<Capture> capture, String chargeId) throws IOException {
        if (capture.isEmpty()) {
            throw new Reply(
                    404,
                    Wire.error(
                            "invalid_request_error",
                            "resource_missing",
                            "no capture of charge " + chargeId + " in the log"));
        }
        send(ex, 200, Wire.capture(capture.get()));
    }

    private static void sendRefund(Exchange ex, Optional<PspRefund> refund, String missing) throws IOException {
        if (refund.isEmpty()) {
            throw new Reply(404, Wire.error("invalid_request_error", "resource_missing", missing));
        }
        send(ex, 200, Wire.refund(refund.get()));
    }

    private static void send(Exchange ex, int status, JsonValue body) throws IOException {
        sendBytes(ex, status, Json.write(body).getBytes(StandardCharsets.UTF_8));
    }

    private static void sendBytes(Exchange ex, int status, byte[] body) throws IOException {
        ex.setHeader("Content-Type", "application/json");
        ex.respond(status, body);
    }
}
