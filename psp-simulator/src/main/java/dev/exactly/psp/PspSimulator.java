package dev.exactly.psp;

import dev.exactly.psp.internal.ChargeBook;
import dev.exactly.psp.internal.Counters;
import dev.exactly.psp.internal.FaultInjector;
import dev.exactly.psp.internal.Http1Server;
import dev.exactly.psp.internal.Json;
import dev.exactly.psp.internal.PspHandler;
import dev.exactly.psp.internal.Wire;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * A payment processor stand-in served over HTTP/1.1 (a server of its own: one thread per connection,
 * each answer in one write). It honours its own {@code Idempotency-Key}: a key captures at most once, a repeat with the
 * same body replays the first answer byte for byte (with {@code Idempotent-Replayed: true}), a repeat
 * with another body gets 422. Concurrent requests with one key are serialised on that key: the first
 * decides, the others wait for it and replay (never 409). The same holds for its other operations
 * ({@link PspOperation}): a hold ({@code "capture": false}) captured or voided once, refunds never above
 * what was captured. It keeps a capture log and a refund log (listed by time window for
 * reconciliation) and counters, and injects faults per run ({@link FaultSettings}) or per request
 * ({@link Fault}) into every operation.
 *
 * <pre>{@code
 * try (PspSimulator psp = PspSimulator.start(PspConfig.ofDefaults());
 *      PspClient client = PspClient.create(psp.baseUri())) {
 *     PspCharge c = client.charge(PspChargeRequest.of(1999, "usd", "tok_visa"), "order-17");
 *     assert psp.captureCount("order-17") == 1;
 * }
 * }</pre>
 *
 * <p>Run alone: {@code java -jar psp-simulator.jar --port 9090} (options: {@code --bind ADDRESS},
 * {@code --latency 50ms}, {@code --jitter 20ms}, {@code --error-rate 0.1}, {@code --seed 7},
 * {@code --authorization-ttl 3600s}).
 */
public final class PspSimulator implements AutoCloseable {

    private static final int BACKLOG = 512;
    /** How long a connection may wait for a request's bytes before it is closed. */
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Connections served at once (one thread each); more are answered 503 and closed. */
    private static final int MAX_CONNECTIONS = 1024;

    private final PspConfig config;
    private final Http1Server server;
    private final ChargeBook book;
    private final FaultInjector faults;
    private final Counters counters = new Counters();
    private final CountDownLatch closing = new CountDownLatch(1);

    private PspSimulator(PspConfig config) throws IOException {
        this.config = config;
        this.book = new ChargeBook(config.clock(), config.honourIdempotencyKeys(), config.authorizationTtl());
        this.faults = new FaultInjector(config.faults());
        this.server = new Http1Server(
                new InetSocketAddress(config.bindAddress(), config.port()),
                BACKLOG,
                new PspHandler(book, faults, counters, config.maxBodyBytes(), closing),
                (status, code, message) -> Json.write(
                                Wire.error(status >= 500 ? "api_error" : "invalid_request_error", code, message))
                        .getBytes(StandardCharsets.UTF_8),
                IDLE_TIMEOUT,
                MAX_CONNECTIONS);
    }

    /** Starts a simulator; it listens until {@link #close()}. */
    public static PspSimulator start(PspConfig config) {
        Objects.requireNonNull(config, "config");
        try {
            return new PspSimulator(config);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + config.bindAddress() + ":" + config.port(), e);
        }
    }

    /** Starts a simulator with {@link PspConfig#ofDefaults()}: loopback, a free port, no faults. */
    public static PspSimulator start() {
        return start(PspConfig.ofDefaults());
    }

    public PspConfig config() {
        return config;
    }

    /** The port it listens on. */
    public int port() {
        return server.address().getPort();
    }

    /** {@code http://host:port} (loopback when bound to the wildcard address). */
    public URI baseUri() {
        InetAddress address = server.address().getAddress();
        if (address.isAnyLocalAddress()) {
            address = InetAddress.getLoopbackAddress();
        }
        String host = address.getHostAddress();
        if (host.indexOf(':') >= 0) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + port());
    }

    // ---------------------------------------------------------------- books

    /** The capture log, oldest first. */
    public List<Capture> captures() {
        return book.captures(null, null);
    }

    /** The captures committed in {@code [from, to)}, oldest first. */
    public List<Capture> captures(Instant from, Instant to) {
        return book.captures(Objects.requireNonNull(from, "from"), Objects.requireNonNull(to, "to"));
    }

    /** The refund log (succeeded refunds), oldest first. */
    public List<Refund> refunds() {
        return book.refunds(null, null);
    }

    /** The refunds committed in {@code [from, to)}, oldest first. */
    public List<Refund> refunds(Instant from, Instant to) {
        return book.refunds(Objects.requireNonNull(from, "from"), Objects.requireNonNull(to, "to"));
    }

    /** How many times money moved for this key (at most 1 unless keys are not honoured). */
    public long captureCount(String idempotencyKey) {
        return book.captureCounts().getOrDefault(idempotencyKey, 0L);
    }

    /** Captures per key, for keys captured at least once. */
    public Map<String, Long> captureCounts() {
        return book.captureCounts();
    }

    /** The charge recorded under this charge key, as it is now (captured, declined or a hold's state). */
    public Optional<PspCharge> findByIdempotencyKey(String idempotencyKey) {
        return book.chargeByKey(idempotencyKey);
    }

    /** The charge with this id, as it is now. */
    public Optional<PspCharge> findById(String chargeId) {
        return book.chargeById(chargeId);
    }

    /** The refund recorded under this refund key (succeeded or failed). */
    public Optional<PspRefund> findRefundByIdempotencyKey(String idempotencyKey) {
        return book.refundByKey(idempotencyKey);
    }

    /** The refund with this id. */
    public Optional<PspRefund> findRefundById(String refundId) {
        return book.refundById(refundId);
    }

    // ---------------------------------------------------------------- test-only: planted mismatches

    /**
     * Test-only: records a captured charge under a charge key as if a client had charged, without any
     * request (source {@code tok_planted}), so that a reconciliation finds a capture its ledger lacks. It
     * is in the capture log and the lookups, not in the counters; a later charge request with this key
     * gets 422.
     *
     * @throws IllegalStateException when the key already holds a charge
     */
    public PspCharge plantCapture(String idempotencyKey, long amount, String currency, Map<String, String> metadata) {
        return book.plantCapture(
                PspHandler.newId("py_"),
                idempotencyKey,
                new PspChargeRequest(amount, currency, "tok_planted", null, metadata));
    }

    /**
     * Test-only: changes the amount of a charge's entry in the capture log, and only there (its lookups
     * keep the real amount), so that a reconciliation finds an amount that differs.
     *
     * @return the changed entry, or empty when the charge has no capture
     */
    public Optional<Capture> amendCapture(String chargeId, long amount) {
        if (amount < 1 || amount > PspChargeRequest.MAX_AMOUNT) {
            throw new IllegalArgumentException("amount must be between 1 and " + PspChargeRequest.MAX_AMOUNT);
        }
        return book.amendCapture(Objects.requireNonNull(chargeId, "chargeId"), amount);
    }

    /**
     * Test-only: removes a charge's entry from the capture log, and only there, so that a
     * reconciliation finds a capture its ledger has and the processor's listing lacks.
     *
     * @return the removed entry, or empty when the charge has no capture
     */
    public Optional<Capture> removeCapture(String chargeId) {
        return book.removeCapture(Objects.requireNonNull(chargeId, "chargeId"));
    }

    /**
     * Test-only: records a refund under a refund key without any request, with the usual limits (a
     * refund above what is left to refund is recorded as failed and not logged); not in the counters.
     *
     * @throws IllegalStateException when the key already holds a refund
     */
    public PspRefund plantRefund(PspRefundRequest request, String idempotencyKey) {
        return book.plantRefund(PspHandler.newId("re_"), idempotencyKey, request);
    }

    /** Counters of this run. */
    public PspStats stats() {
        return counters.snapshot();
    }

    /** Forgets every charge, refund, log entry and counter and drops queued one-shot faults; run faults stay. */
    public void reset() {
        book.clear();
        counters.reset();
        faults.clearPending();
    }

    // ---------------------------------------------------------------- faults

    /** The run's current fault settings. */
    public FaultSettings faults() {
        return faults.settings();
    }

    /** Replaces the run's fault settings (the random sequence restarts from their seed). */
    public void setFaults(FaultSettings settings) {
        faults.set(Objects.requireNonNull(settings, "settings"));
    }

    /** No run faults and no queued one-shot faults. */
    public void clearFaults() {
        faults.clear();
    }

    /**
     * The next {@code count} charge requests (after validation, in arrival order) each suffer these
     * faults, in addition to their own and the run's.
     */
    public void failNext(int count, Fault... injected) {
        failNext(PspOperation.CHARGE, count, injected);
    }

    /**
     * The next {@code count} requests of this operation (after validation, in arrival order) each suffer
     * these faults, in addition to their own and the run's.
     */
    public void failNext(PspOperation operation, int count, Fault... injected) {
        Objects.requireNonNull(operation, "operation");
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive");
        }
        if (injected.length == 0) {
            throw new IllegalArgumentException("name at least one fault");
        }
        faults.enqueue(operation, count, List.of(injected));
    }

    /** One-shot fault sets queued by {@link #failNext} and not yet consumed. */
    public int pendingFaults() {
        return faults.pending();
    }

    // ---------------------------------------------------------------- lifecycle

    /** Stops listening, ends every delay and hang at once (their connections close unanswered). */
    @Override
    public void close() {
        closing.countDown();
        server.close();
    }

    /**
     * Runs the simulator alone until the JVM is stopped.
     *
     * @param args {@code --port N} (default 9090), {@code --bind ADDRESS} (default loopback),
     *             {@code --latency 50ms}, {@code --jitter 20ms}, {@code --error-rate 0.1}, {@code --seed N},
     *             {@code --authorization-ttl 3600s}
     */
    public static void main(String[] args) throws InterruptedException {
        PspConfig.Builder config = PspConfig.custom().port(9090);
        FaultSettings.Builder faultSettings = FaultSettings.custom();
        Duration latency = Duration.ZERO;
        Duration jitter = Duration.ZERO;
        PspConfig built;
        try {
            for (int i = 0; i < args.length; i++) {
                String option = args[i];
                if (option.equals("--help") || option.equals("-h")) {
                    System.out.println(USAGE);
                    return;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(option + " needs a value");
                }
                String value = args[++i];
                switch (option) {
                    case "--port" -> config.port(Integer.parseInt(value));
                    case "--bind" -> config.bindAddress(InetAddress.getByName(value));
                    case "--latency" -> latency = Fault.parseDuration(value);
                    case "--jitter" -> jitter = Fault.parseDuration(value);
                    case "--error-rate" -> faultSettings.errorRate(Double.parseDouble(value));
                    case "--seed" -> faultSettings.seed(Long.parseLong(value));
                    case "--authorization-ttl" -> config.authorizationTtl(Fault.parseDuration(value));
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            built = config.faults(faultSettings.latency(latency, jitter).build())
                    .build();
        } catch (IOException | IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        PspSimulator psp = start(built);
        Runtime.getRuntime().addShutdownHook(new Thread(psp::close, "psp-simulator-shutdown"));
        System.out.println("PSP simulator listening on " + psp.baseUri());
        psp.closing.await();
    }

    private static final String USAGE = """
            usage: java -jar psp-simulator.jar [--port 9090] [--bind 127.0.0.1] [--latency 50ms] \
            [--jitter 20ms] [--error-rate 0.1] [--seed 42] [--authorization-ttl 604800s]""";
}
