package dev.exactly.psp;

import dev.exactly.psp.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;

/**
 * A fault injected into one request of a {@link PspOperation} (charge, capture, void, refund): sent in
 * the {@value #HEADER} header, or queued for the next requests with
 * {@link PspSimulator#failNext(PspOperation, int, Fault...)}. "Capture" below stands for the operation's
 * commit (a refund's for a refund). Wire syntax, comma-separated:
 *
 * <pre>
 * latency=200ms              delay before processing (ms or s)
 * error | error=503          5xx before anything is recorded (default 500): nothing captured
 * timeout | timeout=5s       hang before anything is recorded (default 30 s), then 504: nothing captured
 * timeout-after-capture[=5s] commit, hang (default 30 s), then 504 (aliases: timeout-after-refund,
 *                            timeout-after-commit)
 * drop-response              commit, then close the connection without a response
 * decline | decline=CODE     decline the charge, refuse the capture, void or refund (default code
 *                            card_declined)
 * </pre>
 *
 * <p>Order of effect within one request: latency, error, timeout, commit (or replay), timeout after
 * capture, drop response. Declines only affect a new outcome, never a replay.
 */
public sealed interface Fault {

    /** The request header carrying per-request faults. */
    String HEADER = "Psp-Fault";
    /** The longest latency or hang a fault may ask for. */
    Duration MAX_DELAY = Duration.ofMinutes(2);
    /** How long a timeout hangs unless told otherwise: longer than any sane client timeout. */
    Duration DEFAULT_HOLD = Duration.ofSeconds(30);

    /** The kind counted in {@link PspStats#faults()} when this fault fires. */
    FaultKind kind();

    /** The wire form, e.g. {@code latency=200ms}. */
    String wire();

    /** Delay the request. */
    static Fault latency(Duration delay) {
        return new Latency(delay);
    }

    /** Answer 500 before anything is recorded. */
    static Fault error() {
        return new ServerError(500);
    }

    /** Answer with this 5xx status before anything is recorded. */
    static Fault error(int status) {
        return new ServerError(status);
    }

    /** Hang for {@link #DEFAULT_HOLD} before anything is recorded, then answer 504. */
    static Fault timeout() {
        return new Timeout(DEFAULT_HOLD, false);
    }

    /** Hang for {@code hold} before anything is recorded, then answer 504. */
    static Fault timeout(Duration hold) {
        return new Timeout(hold, false);
    }

    /** Commit the charge, hang for {@link #DEFAULT_HOLD}, then answer 504. */
    static Fault timeoutAfterCapture() {
        return new Timeout(DEFAULT_HOLD, true);
    }

    /** Commit the charge, hang for {@code hold}, then answer 504. */
    static Fault timeoutAfterCapture(Duration hold) {
        return new Timeout(hold, true);
    }

    /** Commit the charge, then close the connection without a response. */
    static Fault dropResponse() {
        return new DropResponse();
    }

    /** Decline a new charge with {@code card_declined}. */
    static Fault decline() {
        return new Decline("card_declined");
    }

    /** Decline a new charge with this code. */
    static Fault decline(String code) {
        return new Decline(code);
    }

    /**
     * Delay the request.
     *
     * @param delay positive, at most {@link #MAX_DELAY}
     */
    record Latency(Duration delay) implements Fault {
        public Latency {
            requireDelay(delay, "latency");
        }

        @Override
        public FaultKind kind() {
            return FaultKind.LATENCY;
        }

        @Override
        public String wire() {
            return "latency=" + formatDuration(delay);
        }
    }

    /**
     * Answer with a 5xx status before anything is recorded.
     *
     * @param status a 5xx status
     */
    record ServerError(int status) implements Fault {
        public ServerError {
            if (status < 500 || status > 599) {
                throw new IllegalArgumentException("error status must be 5xx, was " + status);
            }
        }

        @Override
        public FaultKind kind() {
            return FaultKind.ERROR;
        }

        @Override
        public String wire() {
            return status == 500 ? "error" : "error=" + status;
        }
    }

    /**
     * Hang, then answer 504; with {@code afterCapture}, the charge is committed first.
     *
     * @param hold         how long to hang, positive, at most {@link #MAX_DELAY}
     * @param afterCapture whether the charge is committed before the hang
     */
    record Timeout(Duration hold, boolean afterCapture) implements Fault {
        public Timeout {
            requireDelay(hold, "timeout hold");
        }

        @Override
        public FaultKind kind() {
            return afterCapture ? FaultKind.TIMEOUT_AFTER_CAPTURE : FaultKind.TIMEOUT;
        }

        @Override
        public String wire() {
            return kind().wireName() + "=" + formatDuration(hold);
        }
    }

    /** Commit, then close the connection without a response. */
    record DropResponse() implements Fault {
        @Override
        public FaultKind kind() {
            return FaultKind.DROP_RESPONSE;
        }

        @Override
        public String wire() {
            return kind().wireName();
        }
    }

    /**
     * Decline a new charge.
     *
     * @param code decline code: lower-case letters, digits and underscores, 1–64 characters
     */
    record Decline(String code) implements Fault {
        public Decline {
            Checks.declineCode(code);
        }

        @Override
        public FaultKind kind() {
            return FaultKind.DECLINE;
        }

        @Override
        public String wire() {
            return "decline=" + code;
        }
    }

    /**
     * Parses a header value: comma-separated faults in the syntax above; blank means none.
     *
     * @throws IllegalArgumentException naming the part that does not parse
     */
    static List<Fault> parseHeader(String header) {
        List<Fault> faults = new ArrayList<>();
        for (String part : header.split(",", -1)) {
            String spec = part.strip();
            if (spec.isEmpty()) {
                if (header.isBlank()) {
                    continue;
                }
                throw new IllegalArgumentException("empty fault in \"" + header + "\"");
            }
            faults.add(parse(spec));
        }
        return List.copyOf(faults);
    }

    /** Parses one fault, e.g. {@code timeout=5s}. */
    static Fault parse(String spec) {
        int eq = spec.indexOf('=');
        String name = (eq < 0 ? spec : spec.substring(0, eq)).strip().toLowerCase(Locale.ROOT);
        @Nullable String arg = eq < 0 ? null : spec.substring(eq + 1).strip();
        try {
            return switch (name) {
                case "latency" -> latency(parseDuration(required(arg, name)));
                case "error" -> arg == null ? error() : error(Integer.parseInt(arg));
                case "timeout" -> arg == null ? timeout() : timeout(parseDuration(arg));
                case "timeout-after-capture", "timeout-after-refund", "timeout-after-commit" ->
                    arg == null ? timeoutAfterCapture() : timeoutAfterCapture(parseDuration(arg));
                case "drop-response" -> {
                    if (arg != null) {
                        throw new IllegalArgumentException("drop-response takes no value");
                    }
                    yield dropResponse();
                }
                case "decline" -> arg == null ? decline() : decline(arg);
                default -> throw new IllegalArgumentException("unknown fault");
            };
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid fault \"" + spec + "\": " + e.getMessage(), e);
        }
    }

    /** The header value for these faults (inverse of {@link #parseHeader}). */
    static String header(List<? extends Fault> faults) {
        StringJoiner joiner = new StringJoiner(", ");
        faults.forEach(f -> joiner.add(f.wire()));
        return joiner.toString();
    }

    /** Parses {@code 200ms} or {@code 5s}. */
    static Duration parseDuration(String text) {
        Objects.requireNonNull(text, "text");
        String t = text.strip().toLowerCase(Locale.ROOT);
        long multiplier;
        String digits;
        if (t.endsWith("ms")) {
            multiplier = 1;
            digits = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            multiplier = 1000;
            digits = t.substring(0, t.length() - 1);
        } else {
            throw new IllegalArgumentException("duration must look like 200ms or 5s, was \"" + text + "\"");
        }
        if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("duration must look like 200ms or 5s, was \"" + text + "\"");
        }
        return Duration.ofMillis(Long.parseLong(digits) * multiplier);
    }

    private static String formatDuration(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    private static String required(@Nullable String arg, String name) {
        if (arg == null || arg.isEmpty()) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return arg;
    }

    private static void requireDelay(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero() || d.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException(what + " must be in (0, " + formatDuration(MAX_DELAY) + "]");
        }
        if (d.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException(what + " must be a whole number of milliseconds");
        }
    }
}
