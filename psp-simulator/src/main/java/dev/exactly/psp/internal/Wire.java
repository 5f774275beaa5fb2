package dev.exactly.psp.internal;

import dev.exactly.psp.Capture;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.DeclineRule;
import dev.exactly.psp.FaultKind;
import dev.exactly.psp.FaultSettings;
import dev.exactly.psp.OperationStats;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspRefund;
import dev.exactly.psp.PspRefundRequest;
import dev.exactly.psp.PspStats;
import dev.exactly.psp.Refund;
import dev.exactly.psp.RefundStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The JSON shapes of the HTTP API, in both directions. Reading is strict: unknown members, missing
 * members and wrong types are {@link WireException}s naming the offending member.
 */
public final class Wire {

    /** The {@code object} member of a charge. */
    public static final String CHARGE_OBJECT = "psp_charge";
    /** The {@code object} member of a refund. */
    public static final String REFUND_OBJECT = "psp_refund";

    private static final double BPS = 10_000.0;

    private Wire() {}

    /** A request field that is missing, unknown or invalid. */
    public static final class WireException extends RuntimeException {
        private final String code;

        public WireException(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }

        /** {@code parameter_missing}, {@code parameter_unknown} or {@code parameter_invalid}. */
        public String code() {
            return code;
        }
    }

    // ---------------------------------------------------------------- charges

    /** The request body; {@code capture} is written only when false (the default is to capture). */
    public static JsonValue.Obj chargeRequest(PspChargeRequest r) {
        JsonValue.ObjBuilder b = JsonValue.object()
                .put("amount", r.amount())
                .put("currency", r.currency())
                .put("source", r.source())
                .put("description", r.description())
                .put("metadata", r.metadata());
        if (!r.capture()) {
            b.put("capture", false);
        }
        return b.build();
    }

    /** Reads a charge request body; throws {@link WireException} or {@link JsonException}. */
    public static PspChargeRequest readChargeRequest(JsonValue body) {
        JsonValue.Obj obj = object(body, "the request body");
        allowOnly(obj, Set.of("amount", "currency", "source", "description", "metadata", "capture"));
        long amount = requiredLong(obj, "amount");
        String currency = requiredString(obj, "currency");
        String source = requiredString(obj, "source");
        String description = optionalString(obj, "description");
        Map<String, String> metadata = stringMap(obj, "metadata");
        boolean capture = optionalBoolean(obj, "capture", true);
        try {
            return new PspChargeRequest(amount, currency, source, description, metadata, capture);
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    public static JsonValue.Obj charge(PspCharge c) {
        return JsonValue.object()
                .put("id", c.id())
                .put("object", CHARGE_OBJECT)
                .put("amount", c.amount())
                .put("currency", c.currency())
                .put("status", c.status().wireName())
                .put("idempotency_key", c.idempotencyKey())
                .put("decline_code", c.declineCode())
                .put("created", c.created().getEpochSecond())
                .put("source", c.source())
                .put("description", c.description())
                .put("metadata", c.metadata())
                .put("amount_captured", c.amountCaptured())
                .put("amount_refunded", c.amountRefunded())
                .put(
                        "expires_at",
                        c.expiresAt() == null
                                ? JsonValue.Null.INSTANCE
                                : new JsonValue.Num(c.expiresAt().getEpochSecond()))
                .build();
    }

    /** Reads a charge as the simulator writes it (unknown members are ignored: the client reads leniently). */
    public static PspCharge readCharge(JsonValue json) {
        JsonValue.Obj obj = object(json, "the charge");
        String objectType = requiredString(obj, "object");
        if (!objectType.equals(CHARGE_OBJECT)) {
            throw new WireException("parameter_invalid", "expected a " + CHARGE_OBJECT + ", got " + objectType);
        }
        try {
            long amount = requiredLong(obj, "amount");
            ChargeStatus status = ChargeStatus.fromWire(requiredString(obj, "status"));
            long expiresAt = optionalLong(obj, "expires_at", -1);
            return new PspCharge(
                    requiredString(obj, "id"),
                    amount,
                    requiredString(obj, "currency"),
                    status,
                    requiredString(obj, "idempotency_key"),
                    optionalString(obj, "decline_code"),
                    Instant.ofEpochSecond(requiredLong(obj, "created")),
                    requiredString(obj, "source"),
                    optionalString(obj, "description"),
                    stringMap(obj, "metadata"),
                    optionalLong(obj, "amount_captured", status == ChargeStatus.CAPTURED ? amount : 0),
                    optionalLong(obj, "amount_refunded", 0),
                    expiresAt < 0 ? null : Instant.ofEpochSecond(expiresAt));
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    // ---------------------------------------------------------------- captures, stats

    public static JsonValue.Obj captures(List<Capture> captures) {
        List<JsonValue> data = new ArrayList<>(captures.size());
        for (Capture c : captures) {
            data.add(capture(c));
        }
        return JsonValue.object().put("object", "list").put("data", data).build();
    }

    /** One capture log entry. */
    public static JsonValue.Obj capture(Capture c) {
        return JsonValue.object()
                .put("sequence", c.sequence())
                .put("idempotency_key", c.idempotencyKey())
                .put("charge_id", c.chargeId())
                .put("amount", c.amount())
                .put("currency", c.currency())
                .put("captured_at", c.capturedAt().toString())
                .put("metadata", c.metadata())
                .build();
    }

    /** Reads {@link #captures(List)}. */
    public static List<Capture> readCaptures(JsonValue json) {
        List<Capture> out = new ArrayList<>();
        for (JsonValue.Obj c : listData(json, "the capture list")) {
            out.add(new Capture(
                    requiredLong(c, "sequence"),
                    requiredString(c, "idempotency_key"),
                    requiredString(c, "charge_id"),
                    requiredLong(c, "amount"),
                    requiredString(c, "currency"),
                    instant(c, "captured_at"),
                    stringMap(c, "metadata")));
        }
        return out;
    }

    public static JsonValue.Obj stats(PspStats s) {
        JsonValue.ObjBuilder operations = JsonValue.object();
        s.operations()
                .forEach((operation, o) -> operations.put(
                        operation.wireName(),
                        JsonValue.object()
                                .put("requests", o.requests())
                                .put("succeeded", o.succeeded())
                                .put("refused", o.refused())
                                .put("replays", o.replays())
                                .put("rejected", o.rejected())
                                .put("faults", faults(o.faults()))
                                .build()));
        return JsonValue.object()
                .put("requests", s.requests())
                .put("captures", s.captures())
                .put("declines", s.declines())
                .put("replays", s.replays())
                .put("rejected", s.rejected())
                .put("faults", faults(s.faults()))
                .put("operations", operations.build())
                .build();
    }

    private static JsonValue.Obj faults(Map<FaultKind, Long> fired) {
        JsonValue.ObjBuilder faults = JsonValue.object();
        fired.forEach((kind, n) -> faults.put(kind.wireName(), (long) n));
        return faults.build();
    }

    /** Reads {@link #stats(PspStats)}. */
    public static PspStats readStats(JsonValue json) {
        JsonValue.Obj obj = object(json, "the stats");
        Map<PspOperation, OperationStats> operations = new EnumMap<>(PspOperation.class);
        JsonValue ops = obj.get("operations");
        if (ops != null && !(ops instanceof JsonValue.Null)) {
            for (Map.Entry<String, JsonValue> e :
                    object(ops, "operations").members().entrySet()) {
                JsonValue.Obj o = object(e.getValue(), "an operation's stats");
                operations.put(
                        PspOperation.fromWire(e.getKey()),
                        new OperationStats(
                                requiredLong(o, "requests"),
                                requiredLong(o, "succeeded"),
                                requiredLong(o, "refused"),
                                requiredLong(o, "replays"),
                                requiredLong(o, "rejected"),
                                readFaults(o)));
            }
        }
        return new PspStats(
                requiredLong(obj, "requests"),
                requiredLong(obj, "captures"),
                requiredLong(obj, "declines"),
                requiredLong(obj, "replays"),
                requiredLong(obj, "rejected"),
                readFaults(obj),
                operations);
    }

    private static Map<FaultKind, Long> readFaults(JsonValue.Obj obj) {
        Map<FaultKind, Long> faults = new EnumMap<>(FaultKind.class);
        JsonValue.Obj f = object(required(obj, "faults"), "faults");
        for (Map.Entry<String, JsonValue> e : f.members().entrySet()) {
            if (e.getValue() instanceof JsonValue.Num n) {
                faults.put(FaultKind.fromWire(e.getKey()), n.value());
            }
        }
        return faults;
    }

    // ---------------------------------------------------------------- captures of holds, refunds

    /**
     * Reads a capture request body: empty, {@code {}} or {@code {"amount": n}} (absent: the whole hold).
     */
    public static OptionalLong readCaptureRequest(JsonValue body) {
        JsonValue.Obj obj = object(body, "the request body");
        allowOnly(obj, Set.of("amount"));
        JsonValue amount = obj.get("amount");
        if (amount == null || amount instanceof JsonValue.Null) {
            return OptionalLong.empty();
        }
        long a = requiredLong(obj, "amount");
        if (a < 1 || a > PspChargeRequest.MAX_AMOUNT) {
            throw new WireException(
                    "parameter_invalid",
                    "amount must be between 1 and " + PspChargeRequest.MAX_AMOUNT + " minor units");
        }
        return OptionalLong.of(a);
    }

    /** The capture request body ({@code {}} for the whole hold). */
    public static JsonValue.Obj captureRequest(OptionalLong amount) {
        JsonValue.ObjBuilder b = JsonValue.object();
        amount.ifPresent(a -> b.put("amount", a));
        return b.build();
    }

    /** Reads a void request body: empty or {@code {}}. */
    public static void readVoidRequest(JsonValue body) {
        allowOnly(object(body, "the request body"), Set.of());
    }

    public static JsonValue.Obj refundRequest(PspRefundRequest r) {
        return JsonValue.object()
                .put("charge", r.charge())
                .put("amount", r.amount())
                .put("currency", r.currency())
                .put("reason", r.reason())
                .put("metadata", r.metadata())
                .build();
    }

    /** Reads a refund request body; throws {@link WireException} or {@link JsonException}. */
    public static PspRefundRequest readRefundRequest(JsonValue body) {
        JsonValue.Obj obj = object(body, "the request body");
        allowOnly(obj, Set.of("charge", "amount", "currency", "reason", "metadata"));
        String charge = requiredString(obj, "charge");
        long amount = requiredLong(obj, "amount");
        String currency = requiredString(obj, "currency");
        String reason = optionalString(obj, "reason");
        Map<String, String> metadata = stringMap(obj, "metadata");
        try {
            return new PspRefundRequest(charge, amount, currency, reason, metadata);
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    public static JsonValue.Obj refund(PspRefund r) {
        return JsonValue.object()
                .put("id", r.id())
                .put("object", REFUND_OBJECT)
                .put("charge", r.chargeId())
                .put("amount", r.amount())
                .put("currency", r.currency())
                .put("status", r.status().wireName())
                .put("idempotency_key", r.idempotencyKey())
                .put("failure_code", r.failureCode())
                .put("created", r.created().getEpochSecond())
                .put("reason", r.reason())
                .put("metadata", r.metadata())
                .build();
    }

    /** Reads a refund as the simulator writes it (unknown members are ignored). */
    public static PspRefund readRefund(JsonValue json) {
        JsonValue.Obj obj = object(json, "the refund");
        String objectType = requiredString(obj, "object");
        if (!objectType.equals(REFUND_OBJECT)) {
            throw new WireException("parameter_invalid", "expected a " + REFUND_OBJECT + ", got " + objectType);
        }
        try {
            return new PspRefund(
                    requiredString(obj, "id"),
                    requiredString(obj, "charge"),
                    requiredLong(obj, "amount"),
                    requiredString(obj, "currency"),
                    RefundStatus.fromWire(requiredString(obj, "status")),
                    requiredString(obj, "idempotency_key"),
                    optionalString(obj, "failure_code"),
                    Instant.ofEpochSecond(requiredLong(obj, "created")),
                    optionalString(obj, "reason"),
                    stringMap(obj, "metadata"));
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    public static JsonValue.Obj refunds(List<Refund> refunds) {
        List<JsonValue> data = new ArrayList<>(refunds.size());
        for (Refund r : refunds) {
            data.add(JsonValue.object()
                    .put("sequence", r.sequence())
                    .put("id", r.refundId())
                    .put("idempotency_key", r.idempotencyKey())
                    .put("charge_id", r.chargeId())
                    .put("amount", r.amount())
                    .put("currency", r.currency())
                    .put("refunded_at", r.refundedAt().toString())
                    .put("metadata", r.metadata())
                    .build());
        }
        return JsonValue.object().put("object", "list").put("data", data).build();
    }

    /** Reads {@link #refunds(List)}. */
    public static List<Refund> readRefunds(JsonValue json) {
        List<Refund> out = new ArrayList<>();
        for (JsonValue.Obj r : listData(json, "the refund list")) {
            out.add(new Refund(
                    requiredLong(r, "sequence"),
                    requiredString(r, "id"),
                    requiredString(r, "idempotency_key"),
                    requiredString(r, "charge_id"),
                    requiredLong(r, "amount"),
                    requiredString(r, "currency"),
                    instant(r, "refunded_at"),
                    stringMap(r, "metadata")));
        }
        return out;
    }

    private static List<JsonValue.Obj> listData(JsonValue json, String what) {
        JsonValue.Obj list = object(json, what);
        if (!(list.get("data") instanceof JsonValue.Arr data)) {
            throw new WireException("parameter_invalid", "data must be an array");
        }
        List<JsonValue.Obj> out = new ArrayList<>();
        for (JsonValue element : data.elements()) {
            out.add(object(element, "a list element"));
        }
        return out;
    }

    private static Instant instant(JsonValue.Obj obj, String name) {
        try {
            return Instant.parse(requiredString(obj, name));
        } catch (DateTimeParseException e) {
            throw new WireException("parameter_invalid", name + " must be an ISO-8601 instant");
        }
    }

    /**
     * A test's planted capture: {@code {"idempotency_key", "amount", "currency", "metadata"?}}.
     *
     * @param key      the charge key it is recorded under
     * @param request  the equivalent charge request (source {@code tok_planted})
     */
    public record PlantedCapture(String key, PspChargeRequest request) {}

    /** Reads {@link PlantedCapture}. */
    public static PlantedCapture readPlantedCapture(JsonValue body) {
        JsonValue.Obj obj = object(body, "the request body");
        allowOnly(obj, Set.of("idempotency_key", "amount", "currency", "metadata"));
        String key = requiredString(obj, "idempotency_key");
        if (!Checks.validKey(key)) {
            throw new WireException("parameter_invalid", "idempotency_key must be 1-255 printable ASCII characters");
        }
        try {
            return new PlantedCapture(
                    key,
                    new PspChargeRequest(
                            requiredLong(obj, "amount"),
                            requiredString(obj, "currency"),
                            "tok_planted",
                            null,
                            stringMap(obj, "metadata")));
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    /** A test's change to a capture log entry: {@code {"charge": id, "amount": n}} (amount only to amend). */
    public record CaptureChange(String chargeId, long amount) {}

    /** Reads {@link CaptureChange}; {@code withAmount} says whether the amount is required (amend) or refused (remove). */
    public static CaptureChange readCaptureChange(JsonValue body, boolean withAmount) {
        JsonValue.Obj obj = object(body, "the request body");
        allowOnly(obj, withAmount ? Set.of("charge", "amount") : Set.of("charge"));
        String charge = requiredString(obj, "charge");
        long amount = withAmount ? requiredLong(obj, "amount") : 0;
        if (withAmount && (amount < 1 || amount > PspChargeRequest.MAX_AMOUNT)) {
            throw new WireException(
                    "parameter_invalid",
                    "amount must be between 1 and " + PspChargeRequest.MAX_AMOUNT + " minor units");
        }
        return new CaptureChange(charge, amount);
    }

    /** A test's planted refund: the refund request and the key it is recorded under. */
    public record PlantedRefund(String key, PspRefundRequest request) {}

    /** Reads {@link PlantedRefund}: a refund request body plus {@code idempotency_key}. */
    public static PlantedRefund readPlantedRefund(JsonValue body) {
        JsonValue.Obj obj = object(body, "the request body");
        String key = requiredString(obj, "idempotency_key");
        if (!Checks.validKey(key)) {
            throw new WireException("parameter_invalid", "idempotency_key must be 1-255 printable ASCII characters");
        }
        Map<String, JsonValue> rest = new LinkedHashMap<>(obj.members());
        rest.remove("idempotency_key");
        return new PlantedRefund(key, readRefundRequest(new JsonValue.Obj(rest)));
    }

    // ---------------------------------------------------------------- errors

    /** An exception's message for an error's text: its class's name when it has none. */
    public static String messageOf(Throwable e) {
        return Objects.requireNonNullElse(e.getMessage(), e.getClass().getSimpleName());
    }

    /** A Stripe-style error body: {@code {"error":{"type":…,"code":…,"message":…}}}. */
    public static JsonValue.Obj error(String type, String code, String message) {
        return JsonValue.object()
                .put(
                        "error",
                        JsonValue.object()
                                .put("type", type)
                                .put("code", code)
                                .put("message", message)
                                .build())
                .build();
    }

    /** The code and message of an error body; both null when the body is not one. */
    public record ErrorBody(@Nullable String code, @Nullable String message) {}

    /** Reads {@link #error}, leniently: anything else gives an empty {@link ErrorBody}. */
    public static ErrorBody readError(String body) {
        try {
            if (Json.parse(body) instanceof JsonValue.Obj obj && obj.get("error") instanceof JsonValue.Obj err) {
                return new ErrorBody(optionalString(err, "code"), optionalString(err, "message"));
            }
        } catch (JsonException | WireException e) {
            // not an error body
        }
        return new ErrorBody(null, null);
    }

    // ---------------------------------------------------------------- fault settings

    public static JsonValue.Obj faultSettings(FaultSettings s, int pendingNext) {
        List<JsonValue> rules = new ArrayList<>();
        for (DeclineRule rule : s.declines()) {
            JsonValue.ObjBuilder r = JsonValue.object();
            switch (rule) {
                case DeclineRule.BySource b -> r.put("source", b.source());
                case DeclineRule.ByAmount a -> r.put("amount", a.amount());
                case DeclineRule.AmountAtLeast a -> r.put("amount_at_least", a.minimum());
            }
            rules.add(r.put("code", rule.code()).build());
        }
        return JsonValue.object()
                .put("latency_ms", s.latency().toMillis())
                .put("latency_jitter_ms", s.latencyJitter().toMillis())
                .put("error_rate_bps", bps(s.errorRate()))
                .put("error_status", s.errorStatus())
                .put("timeout_rate_bps", bps(s.timeoutRate()))
                .put("timeout_after_capture_rate_bps", bps(s.timeoutAfterCaptureRate()))
                .put("drop_response_rate_bps", bps(s.dropResponseRate()))
                .put("timeout_hold_ms", s.timeoutHold().toMillis())
                .put("declines", rules)
                .put("seed", s.seed())
                .put("pending_next", pendingNext)
                .build();
    }

    /**
     * Reads fault settings: every member optional (absent means off / default), rates in basis points
     * (1 bps = 0.01 %), durations in milliseconds.
     */
    public static FaultSettings readFaultSettings(JsonValue json) {
        JsonValue.Obj obj = object(json, "the fault settings");
        allowOnly(
                obj,
                Set.of(
                        "latency_ms",
                        "latency_jitter_ms",
                        "error_rate_bps",
                        "error_status",
                        "timeout_rate_bps",
                        "timeout_after_capture_rate_bps",
                        "drop_response_rate_bps",
                        "timeout_hold_ms",
                        "declines",
                        "seed"));
        FaultSettings none = FaultSettings.none();
        FaultSettings.Builder b = FaultSettings.custom()
                .latency(millis(obj, "latency_ms", Duration.ZERO), millis(obj, "latency_jitter_ms", Duration.ZERO))
                .errorRate(rate(obj, "error_rate_bps"))
                .errorStatus(status(optionalLong(obj, "error_status", none.errorStatus())))
                .timeoutRate(rate(obj, "timeout_rate_bps"))
                .timeoutAfterCaptureRate(rate(obj, "timeout_after_capture_rate_bps"))
                .dropResponseRate(rate(obj, "drop_response_rate_bps"))
                .timeoutHold(millis(obj, "timeout_hold_ms", none.timeoutHold()))
                .seed(optionalLong(obj, "seed", none.seed()));
        JsonValue declines = obj.get("declines");
        if (declines != null && !(declines instanceof JsonValue.Null)) {
            if (!(declines instanceof JsonValue.Arr arr)) {
                throw new WireException("parameter_invalid", "declines must be an array");
            }
            for (JsonValue element : arr.elements()) {
                b.decline(declineRule(object(element, "a decline rule")));
            }
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    private static DeclineRule declineRule(JsonValue.Obj r) {
        allowOnly(r, Set.of("source", "amount", "amount_at_least", "code"));
        String code = requiredString(r, "code");
        int selectors = (r.get("source") != null ? 1 : 0)
                + (r.get("amount") != null ? 1 : 0)
                + (r.get("amount_at_least") != null ? 1 : 0);
        if (selectors != 1) {
            throw new WireException(
                    "parameter_invalid", "a decline rule needs exactly one of source, amount, amount_at_least");
        }
        try {
            if (r.get("source") != null) {
                return DeclineRule.source(requiredString(r, "source"), code);
            }
            if (r.get("amount") != null) {
                return DeclineRule.amount(requiredLong(r, "amount"), code);
            }
            return DeclineRule.amountAtLeast(requiredLong(r, "amount_at_least"), code);
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
    }

    private static int status(long status) {
        if (status < 500 || status > 599) {
            throw new WireException("parameter_invalid", "error_status must be 5xx, was " + status);
        }
        return (int) status;
    }

    private static long bps(double rate) {
        return Math.round(rate * BPS);
    }

    private static double rate(JsonValue.Obj obj, String name) {
        long bps = optionalLong(obj, name, 0);
        if (bps < 0 || bps > BPS) {
            throw new WireException("parameter_invalid", name + " must be in [0, 10000] basis points");
        }
        return bps / BPS;
    }

    private static Duration millis(JsonValue.Obj obj, String name, Duration fallback) {
        JsonValue v = obj.get(name);
        if (v == null) {
            return fallback;
        }
        long ms = requiredLong(obj, name);
        if (ms < 0) {
            throw new WireException("parameter_invalid", name + " must not be negative");
        }
        return Duration.ofMillis(ms);
    }

    /**
     * A request to inject {@code faults} (header syntax) into the next {@code count} requests of an
     * operation.
     */
    public record NextFaults(PspOperation operation, int count, String faults) {}

    /** Reads the one-shot fault request {@code {"count": n, "faults": "…", "operation": "refund"}} (default charge). */
    public static NextFaults readNextFaults(JsonValue json) {
        JsonValue.Obj obj = object(json, "the request body");
        allowOnly(obj, Set.of("count", "faults", "operation"));
        long count = requiredLong(obj, "count");
        if (count < 1 || count > 1_000_000) {
            throw new WireException("parameter_invalid", "count must be in [1, 1000000]");
        }
        String operation = optionalString(obj, "operation");
        PspOperation op;
        try {
            op = operation == null ? PspOperation.CHARGE : PspOperation.fromWire(operation);
        } catch (IllegalArgumentException e) {
            throw new WireException("parameter_invalid", messageOf(e));
        }
        return new NextFaults(op, (int) count, requiredString(obj, "faults"));
    }

    // ---------------------------------------------------------------- typed member access

    private static JsonValue.Obj object(JsonValue v, String what) {
        if (v instanceof JsonValue.Obj obj) {
            return obj;
        }
        throw new WireException("parameter_invalid", what + " must be a JSON object");
    }

    private static void allowOnly(JsonValue.Obj obj, Set<String> allowed) {
        for (String name : obj.members().keySet()) {
            if (!allowed.contains(name)) {
                throw new WireException("parameter_unknown", "unknown parameter: " + name);
            }
        }
    }

    private static JsonValue required(JsonValue.Obj obj, String name) {
        JsonValue v = obj.get(name);
        if (v == null || v instanceof JsonValue.Null) {
            throw new WireException("parameter_missing", "missing required parameter: " + name);
        }
        return v;
    }

    private static long requiredLong(JsonValue.Obj obj, String name) {
        if (required(obj, name) instanceof JsonValue.Num n) {
            return n.value();
        }
        throw new WireException("parameter_invalid", name + " must be an integer");
    }

    private static long optionalLong(JsonValue.Obj obj, String name, long fallback) {
        JsonValue v = obj.get(name);
        return v == null || v instanceof JsonValue.Null ? fallback : requiredLong(obj, name);
    }

    private static boolean optionalBoolean(JsonValue.Obj obj, String name, boolean fallback) {
        JsonValue v = obj.get(name);
        if (v == null || v instanceof JsonValue.Null) {
            return fallback;
        }
        if (v instanceof JsonValue.Bool b) {
            return b.value();
        }
        throw new WireException("parameter_invalid", name + " must be true or false");
    }

    private static String requiredString(JsonValue.Obj obj, String name) {
        if (required(obj, name) instanceof JsonValue.Str s) {
            return s.value();
        }
        throw new WireException("parameter_invalid", name + " must be a string");
    }

    private static @Nullable String optionalString(JsonValue.Obj obj, String name) {
        JsonValue v = obj.get(name);
        return v == null || v instanceof JsonValue.Null ? null : requiredString(obj, name);
    }

    private static Map<String, String> stringMap(JsonValue.Obj obj, String name) {
        JsonValue v = obj.get(name);
        if (v == null || v instanceof JsonValue.Null) {
            return Map.of();
        }
        JsonValue.Obj map = object(v, name);
        Map<String, String> out = new LinkedHashMap<>();
        map.members().forEach((k, value) -> {
            if (!(value instanceof JsonValue.Str s)) {
                throw new WireException("parameter_invalid", name + "." + k + " must be a string");
            }
            out.put(k, s.value());
        });
        return out;
    }
}
