package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.tasks.Periodic;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Sends the outbox's deliveries, at least once. A claim, in one short transaction, takes due pending
 * deliveries ({@code FOR UPDATE SKIP LOCKED}, so any number of workers, in this process or other instances,
 * claim disjoint ones): the attempt is counted and the delivery hidden from other workers until the claim's
 * lease ends. Then, outside any transaction, each is POSTed to its endpoint with the event's exact bytes, its
 * id and type, and a fresh signature; only a 2xx marks it delivered. Any other status, a timeout or a refused
 * connection schedules the next attempt after a {@link RetrySchedule} pause, and the last failed attempt
 * dead-letters it (both writes fenced by the claim's token, so a worker whose lease ran out cannot undo a
 * newer attempt). A worker that dies between sending and recording leaves the delivery claimed: when the
 * lease ends, another worker sends the same event (same id) again. A delivery whose last attempt died that
 * way is dead-lettered when its lease ends.
 *
 * <h2>One endpoint cannot hold back the others</h2>
 * A claim takes the oldest due deliveries endpoint by endpoint, at most {@link Settings#perEndpoint} of
 * each endpoint while this worker sends none of its deliveries, and fewer while it sends some (never more
 * than that many of one endpoint at once), then the oldest of those up to the batch. The scheduled worker
 * keeps {@link Settings#parallelism} attempts under way and claims again as soon as one ends, rather than
 * sending a batch and waiting for its slowest attempt. So a tenant's flood of events, or an endpoint that
 * answers only at the request timeout, takes at most {@code perEndpoint} of the worker's attempts, and every
 * other endpoint's deliveries go out meanwhile; oldest first across endpoints.
 *
 * <p>An attempt resolves its endpoint's host once and connects to the addresses it judged
 * ({@link Destinations#resolve}, {@link WebhookPost}): a DNS answer that changes in between cannot send it
 * into the service's network.
 *
 * <p>Headers of every delivery: {@code Content-Type: application/json}, {@code Exactly-Event-Id},
 * {@code Exactly-Event-Type}, {@code Exactly-Delivery-Attempt} (1, 2, …) and {@code Exactly-Signature}
 * ({@link WebhookSignature}).
 */
public final class DeliveryWorker implements SmartLifecycle {
    /** The event id header: receivers deduplicate on it. */
    public static final String EVENT_ID_HEADER = "Exactly-Event-Id";

    public static final String EVENT_TYPE_HEADER = "Exactly-Event-Type";
    public static final String ATTEMPT_HEADER = "Exactly-Delivery-Attempt";
    private static final String USER_AGENT = "Exactly-Webhooks/1";
    private static final Logger log = LoggerFactory.getLogger(DeliveryWorker.class);
    private static final ThreadFactory THREADS =
            Thread.ofVirtual().name("payments-webhooks-", 0).factory();
    private static final int MAX_ERROR = 500;

    /**
     * Claims due deliveries: counts the attempt and holds them until the lease ends. The endpoints with pending
     * deliveries, found by skipping through the index of pending deliveries by
     * endpoint (one probe per endpoint, however many deliveries each has); of those with a due delivery and
     * a share left (the default, or what this worker's attempts under way to it leave), the batch's worth
     * whose oldest due delivery is oldest; of each of these, its oldest due deliveries up to its share,
     * locked ({@code SKIP LOCKED}: another worker's claim takes others); of those, the oldest up to the batch.
     * Rows are locked only for the chosen endpoints (at most batch × share), not one per endpoint.
     */
    private static final String CLAIM = """
            WITH RECURSIVE p AS (
                SELECT ?::timestamptz AS now, ?::int AS max_attempts, ?::int AS share, ?::int AS batch),
            endpoints(id) AS (
                (SELECT endpoint_id FROM payments_webhook_delivery
                  WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
                UNION ALL
                SELECT (SELECT d.endpoint_id FROM payments_webhook_delivery d
                         WHERE d.status = 'pending' AND d.endpoint_id > endpoints.id
                         ORDER BY d.endpoint_id LIMIT 1)
                  FROM endpoints WHERE endpoints.id IS NOT NULL),
            heads AS (
                SELECT endpoints.id, coalesce(busy.allowed, p.share) AS allowed
                  FROM p, endpoints
                  LEFT JOIN unnest(?::text[], ?::int[]) AS busy(endpoint_id, allowed) ON busy.endpoint_id = endpoints.id
                  CROSS JOIN LATERAL (
                      SELECT d.next_attempt_at FROM payments_webhook_delivery d
                       WHERE d.endpoint_id = endpoints.id AND d.status = 'pending'
                         AND d.next_attempt_at <= (SELECT now FROM p) AND d.attempts < (SELECT max_attempts FROM p)
                       ORDER BY d.next_attempt_at, d.id LIMIT 1) head
                 WHERE endpoints.id IS NOT NULL AND coalesce(busy.allowed, p.share) > 0
                 ORDER BY head.next_attempt_at
                 LIMIT (SELECT batch FROM p)),
            due AS (
                SELECT d.id
                  FROM heads
                  CROSS JOIN LATERAL (
                      SELECT d.id, d.next_attempt_at FROM payments_webhook_delivery d
                       WHERE d.endpoint_id = heads.id AND d.status = 'pending'
                         AND d.next_attempt_at <= (SELECT now FROM p) AND d.attempts < (SELECT max_attempts FROM p)
                       ORDER BY d.next_attempt_at, d.id
                       LIMIT heads.allowed
                       FOR UPDATE SKIP LOCKED) d
                 ORDER BY d.next_attempt_at, d.id
                 LIMIT (SELECT batch FROM p))
            UPDATE payments_webhook_delivery d
               SET attempts = d.attempts + 1, next_attempt_at = ?, claim_token = ?, last_attempt_at = ?
              FROM due, payments_webhook_endpoint e, payments_event ev
             WHERE d.id = due.id AND e.id = d.endpoint_id AND ev.id = d.event_id
            RETURNING d.id, d.event_id, d.endpoint_id, e.status AS endpoint_status, d.attempts, ev.type, ev.body,
                      e.url, e.secret
            """;
    /**
     * A claimed delivery of an endpoint that was disabled meanwhile (an event whose transaction read the
     * endpoint as enabled committed after the disabling had canceled its pending deliveries): canceled as the
     * disabling would have, without an attempt.
     */
    private static final String CANCELED = """
            UPDATE payments_webhook_delivery
               SET status = 'canceled', attempts = attempts - 1, claim_token = NULL,
                   last_error = coalesce(last_error, 'endpoint disabled')
             WHERE id = ? AND claim_token = ? AND status = 'pending'
            """;
    /** Deliveries whose last attempt's worker died (its lease ended without an outcome). */
    private static final String DEAD_LETTER_ABANDONED = """
            UPDATE payments_webhook_delivery
               SET status = 'dead_lettered', claim_token = NULL,
                   last_error = 'the last attempt ended without an answer recorded (' || coalesce(last_error, 'worker stopped') || ')'
             WHERE status = 'pending' AND attempts >= ? AND next_attempt_at <= ?
            """;

    private static final String DELIVERED = """
            UPDATE payments_webhook_delivery
               SET status = 'delivered', delivered_at = ?, last_status = ?, last_error = NULL, claim_token = NULL
             WHERE id = ? AND status = 'pending'
            """;
    private static final String FAILED = """
            UPDATE payments_webhook_delivery
               SET status = CASE WHEN ? THEN 'dead_lettered' ELSE 'pending' END,
                   next_attempt_at = ?, last_status = ?, last_error = ?, claim_token = NULL
             WHERE id = ? AND claim_token = ? AND status = 'pending'
            """;

    private final Jdbc jdbc;
    private final Settings settings;
    private final InstantSource clock;
    private final RandomGenerator random;
    private final Network network;
    private final AtomicLong attempts = new AtomicLong();
    private final AtomicLong claims = new AtomicLong();
    /** Attempts the scheduled worker may still start: {@code parallelism} less those under way. */
    private final Semaphore slots;
    /** The scheduled worker's attempts under way, per endpoint. */
    private final Map<String, Integer> inFlight = new ConcurrentHashMap<>();

    private @Nullable Periodic running;
    private @Nullable ExecutorService senders;

    public DeliveryWorker(Jdbc jdbc, Settings settings, InstantSource clock, RandomGenerator random) {
        this(jdbc, settings, clock, random, Network.system());
    }

    /** @param network how attempts reach endpoints */
    public DeliveryWorker(Jdbc jdbc, Settings settings, InstantSource clock, RandomGenerator random, Network network) {
        this.jdbc = jdbc;
        this.network = network;
        this.settings = settings;
        this.clock = clock;
        this.random = random;
        this.slots = new Semaphore(settings.parallelism());
    }

    /**
     * How attempts reach endpoints: each attempt's host is resolved once with {@code resolver} and the
     * attempt connects to the addresses it gave ({@link Destinations#resolve}); {@code tls} opens https
     * connections (its trust store decides which certificates are accepted).
     */
    public record Network(
            Destinations.Resolver resolver,
            SSLSocketFactory tls,
            @Nullable ProxySelector proxies) {
        /**
         * The system's resolver, the JVM's default TLS (its default trust store) and its proxy settings
         * ({@code https.proxyHost}, {@code http.proxyHost}, {@code http.nonProxyHosts}).
         */
        public static Network system() {
            return new Network(
                    Destinations.Resolver.SYSTEM,
                    (SSLSocketFactory) SSLSocketFactory.getDefault(),
                    ProxySelector.getDefault());
        }
    }

    /**
     * The worker's settings.
     *
     * @param enabled        whether it sweeps on a schedule in this instance
     * @param interval       pause between two sweeps
     * @param batchSize      deliveries claimed at once
     * @param parallelism    deliveries sent at once
     * @param perEndpoint    deliveries of one endpoint sent at once (by this worker), and claimed at once
     * @param lease          how long a claimed delivery stays hidden from other workers; longer than
     *                       {@code connectTimeout + requestTimeout}, so a live worker always records its
     *                       outcome before anyone else may send again
     * @param retries        backoff and dead letter
     * @param connectTimeout bound of connecting to an endpoint
     * @param requestTimeout bound of one attempt's answer
     * @param allowPrivateNetworks whether deliveries may go to loopback, private and link-local addresses
     *                       (otherwise such an attempt fails without being sent: {@link Destinations})
     */
    public record Settings(
            boolean enabled,
            Duration interval,
            int batchSize,
            int parallelism,
            int perEndpoint,
            Duration lease,
            RetrySchedule retries,
            Duration connectTimeout,
            Duration requestTimeout,
            boolean allowPrivateNetworks) {
        public Settings {
            if (batchSize < 1 || parallelism < 1 || perEndpoint < 1) {
                throw new IllegalArgumentException(
                        "webhook batch size, parallelism and per-endpoint parallelism must be positive");
            }
            if (interval.toMillis() < 1 || connectTimeout.toMillis() < 1 || requestTimeout.toMillis() < 1) {
                throw new IllegalArgumentException("webhook interval and timeouts must be positive");
            }
            if (lease.compareTo(connectTimeout.plus(requestTimeout)) <= 0) {
                throw new IllegalArgumentException("the webhook lease (" + lease + ") must be longer than the connect "
                        + "timeout plus the request timeout (" + connectTimeout.plus(requestTimeout) + "), or two "
                        + "workers could send the same attempt at once");
            }
        }
    }

    /** A delivery this worker claimed. */
    private record Claimed(
            long id,
            String eventId,
            String endpointId,
            boolean endpointEnabled,
            int attempt,
            String type,
            String body,
            String url,
            String secret,
            String token) {}

    /**
     * One round, waited for: dead-letters abandoned last attempts, claims up to a batch of due deliveries (at
     * most {@code perEndpoint} of each endpoint) and sends each once, {@code parallelism} at a time.
     *
     * @return how many deliveries were claimed
     */
    public int runOnce() {
        List<Claimed> claimed = claim(settings.batchSize());
        if (claimed.isEmpty()) {
            return 0;
        }
        try (ExecutorService each = Executors.newFixedThreadPool(settings.parallelism(), THREADS)) {
            List<Future<?>> running = new ArrayList<>();
            for (Claimed delivery : claimed) {
                running.add(each.submit(() -> deliver(delivery)));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } catch (ExecutionException e) {
                    log.warn(
                            "a webhook delivery failed unexpectedly; it is sent again when its lease ends",
                            e.getCause());
                }
            }
        }
        return claimed.size();
    }

    /**
     * In one transaction: dead-letters abandoned last attempts and claims up to {@code max} due deliveries,
     * each endpoint's share reduced by this worker's attempts under way to it.
     */
    private List<Claimed> claim(int max) {
        Instant now = clock.instant();
        int maxAttempts = settings.retries().maxAttempts();
        String token = WebhookIds.claim();
        claims.incrementAndGet();
        List<String> busy = new ArrayList<>();
        List<Integer> allowed = new ArrayList<>();
        inFlight.forEach((endpoint, sending) -> {
            busy.add(endpoint);
            allowed.add(Math.max(0, settings.perEndpoint() - sending));
        });
        return jdbc.inTransaction(c -> {
            int abandoned = Jdbc.update(c, DEAD_LETTER_ABANDONED, s -> {
                s.setInt(1, maxAttempts);
                s.setTimestamp(2, Jdbc.timestamp(now));
            });
            if (abandoned > 0) {
                log.warn("dead-lettered {} webhook deliveries whose last attempt ended without an answer", abandoned);
            }
            return Jdbc.query(
                    c,
                    CLAIM,
                    s -> {
                        s.setTimestamp(1, Jdbc.timestamp(now));
                        s.setInt(2, maxAttempts);
                        s.setInt(3, settings.perEndpoint());
                        s.setInt(4, max);
                        s.setArray(5, c.createArrayOf("text", busy.toArray()));
                        s.setArray(6, c.createArrayOf("int4", allowed.toArray()));
                        s.setTimestamp(7, Jdbc.timestamp(now.plus(settings.lease())));
                        s.setString(8, token);
                        s.setTimestamp(9, Jdbc.timestamp(now));
                    },
                    row -> new Claimed(
                            row.getLong("id"),
                            row.getString("event_id"),
                            row.getString("endpoint_id"),
                            "enabled".equals(row.getString("endpoint_status")),
                            row.getInt("attempts"),
                            row.getString("type"),
                            row.getString("body"),
                            row.getString("url"),
                            row.getString("secret"),
                            token));
        });
    }

    /** Claim transactions this worker ran since it started. */
    public long claimCount() {
        return claims.get();
    }

    /** Attempts sent (or tried) by this worker since it started. */
    public long attemptCount() {
        return attempts.get();
    }

    private void deliver(Claimed delivery) {
        if (!delivery.endpointEnabled()) {
            jdbc.inTransaction(c -> Jdbc.update(c, CANCELED, s -> {
                s.setLong(1, delivery.id());
                s.setString(2, delivery.token());
            }));
            return;
        }
        attempts.incrementAndGet();
        byte[] body = delivery.body().getBytes(StandardCharsets.UTF_8);
        int status = 0;
        String error;
        String detail = null;
        try {
            URI uri = URI.create(delivery.url());
            InetSocketAddress proxy = WebhookPost.proxyFor(uri, network.proxies());
            WebhookPost.Route route = null;
            error = null;
            if (proxy != null && settings.allowPrivateNetworks()) {
                // through a proxy that may reach private networks, the name is the proxy's to resolve (this
                // instance may have no DNS for the outside at all)
                route = new WebhookPost.Route.Proxied(proxy);
            } else {
                switch (Destinations.resolve(uri.getHost(), network.resolver(), settings.allowPrivateNetworks())) {
                    case Destinations.Resolution.Refused refused -> {
                        error = Destinations.DOES_NOT_RESOLVE_MARK.equals(refused.refusal())
                                ? "refused: the URL's host does not resolve"
                                : "refused: the URL's host is not a public address";
                        detail = Destinations.detail(uri.getHost(), refused.refusal());
                    }
                    // to the addresses just judged, never to what the name resolves to by then (unless a proxy is
                    // in between)
                    case Destinations.Resolution.Allowed allowed ->
                        route = proxy != null
                                ? new WebhookPost.Route.Proxied(proxy)
                                : new WebhookPost.Route.Direct(allowed.addresses());
                }
            }
            if (route != null) {
                status = send(delivery, uri, route, body);
                error = "HTTP " + status;
            }
        } catch (IOException | RuntimeException e) {
            if (Thread.currentThread().isInterrupted()) {
                // stopping (an interrupt closes the socket): the claim's lease ends and another worker sends it again
                return;
            }
            error = failure(e);
            detail = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        }
        Instant now = clock.instant();
        if (status >= 200 && status < 300) {
            int code = status;
            jdbc.inTransaction(c -> Jdbc.update(c, DELIVERED, s -> {
                s.setTimestamp(1, Jdbc.timestamp(now));
                s.setInt(2, code);
                s.setLong(3, delivery.id());
            }));
            return;
        }
        boolean dead = settings.retries().exhausted(delivery.attempt());
        Instant next = dead ? now : now.plus(settings.retries().delayAfter(delivery.attempt(), random));
        Integer code = status == 0 ? null : status;
        String ended = Objects.requireNonNull(error, "every way above says how the attempt ended");
        String reason = ended.length() > MAX_ERROR ? ended.substring(0, MAX_ERROR) : ended;
        int written = jdbc.inTransaction(c -> Jdbc.update(c, FAILED, s -> {
            s.setBoolean(1, dead);
            s.setTimestamp(2, Jdbc.timestamp(next));
            s.setObject(3, code, java.sql.Types.INTEGER);
            s.setString(4, reason);
            s.setLong(5, delivery.id());
            s.setString(6, delivery.token());
        }));
        if (detail != null) {
            log.info(
                    "webhook delivery {} of event {}, attempt {}: {}",
                    delivery.id(),
                    delivery.eventId(),
                    delivery.attempt(),
                    detail);
        }
        if (written == 0) {
            log.info(
                    "webhook delivery {} of event {}: attempt {} failed ({}) after its claim ended; a newer attempt decides",
                    delivery.id(),
                    delivery.eventId(),
                    delivery.attempt(),
                    reason);
        } else if (dead) {
            log.warn(
                    "webhook delivery {} of event {} dead-lettered after {} attempts ({})",
                    delivery.id(),
                    delivery.eventId(),
                    delivery.attempt(),
                    reason);
        }
    }

    /**
     * One attempt on the wire, signed now; its status. The status is all that counts: the body is never read
     * (an endless one cannot hold the worker).
     */
    private int send(Claimed delivery, URI uri, WebhookPost.Route route, byte[] body) throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("User-Agent", USER_AGENT);
        headers.put(EVENT_ID_HEADER, delivery.eventId());
        headers.put(EVENT_TYPE_HEADER, delivery.type());
        headers.put(ATTEMPT_HEADER, Integer.toString(delivery.attempt()));
        headers.put(WebhookSignature.HEADER, WebhookSignature.header(delivery.secret(), clock.instant(), body));
        return WebhookPost.send(
                uri, route, headers, body, settings.connectTimeout(), settings.requestTimeout(), network.tls());
    }

    /**
     * What the tenant is told of an attempt that got no answer (its events show it): one of a few fixed
     * phrases. The exception's own text stays in this service's log: it names internal classes, and its
     * differences (a refused connection, a closed one, one that timed out) would let a tenant map the
     * service's network port by port.
     */
    private String failure(Exception e) {
        if (e instanceof WebhookPost.ConnectTimeout) {
            return "the connection timed out";
        }
        if (e instanceof WebhookPost.AnswerTimeout) {
            return "no answer within " + settings.requestTimeout().toSeconds() + " s";
        }
        if (e instanceof javax.net.ssl.SSLException) {
            return "the TLS handshake failed";
        }
        if (e instanceof IOException) {
            return "the connection failed";
        }
        return "the URL cannot be called";
    }

    /**
     * The scheduled work: claims as many deliveries as there are free attempts (up to the batch) and starts
     * each; then waits (at most an interval) until a quarter of the attempts have ended and claims again, so
     * that claims come in batches rather than one per ended attempt (a claim reads every endpoint with
     * pending deliveries). Returns, until the next interval, once a claim found fewer due deliveries than it
     * asked for, or no attempt ended within the interval.
     */
    private void sweep() {
        ExecutorService sending = senders;
        if (sending == null) {
            return;
        }
        int enough = Math.min(settings.batchSize(), Math.max(1, settings.parallelism() / 4));
        try {
            while (true) {
                if (slots.availablePermits() < enough) {
                    if (slots.tryAcquire(enough, settings.interval().toMillis(), TimeUnit.MILLISECONDS)) {
                        slots.release(enough);
                    } else if (slots.availablePermits() == 0) {
                        return;
                    }
                }
                int asked = Math.min(slots.availablePermits(), settings.batchSize());
                List<Claimed> claimed = claim(asked);
                for (Claimed delivery : claimed) {
                    launch(sending, delivery);
                }
                if (claimed.size() < asked) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts one attempt on its own thread; its slot and its endpoint's count are given back when it ends. */
    private void launch(ExecutorService sending, Claimed delivery) {
        // only this sweep takes slots, and it claimed no more than were free
        slots.acquireUninterruptibly();
        inFlight.merge(delivery.endpointId(), 1, Integer::sum);
        Runnable ended = () -> {
            inFlight.computeIfPresent(delivery.endpointId(), (endpoint, n) -> n == 1 ? null : n - 1);
            slots.release();
        };
        try {
            sending.execute(() -> {
                try {
                    deliver(delivery);
                } catch (RuntimeException e) {
                    log.warn("a webhook delivery failed unexpectedly; it is sent again when its lease ends", e);
                } finally {
                    ended.run();
                }
            });
        } catch (RejectedExecutionException stopping) {
            // stopping: the claim's lease ends and a worker sends it then
            ended.run();
        }
    }

    @Override
    public synchronized void start() {
        if (running == null && settings.enabled()) {
            senders = Executors.newThreadPerTaskExecutor(THREADS);
            // at once: deliveries left pending while no worker ran go out as the service starts
            running = Periodic.start("payments-webhooks", Duration.ZERO, settings.interval(), this::sweep);
        }
    }

    /** Stops claiming, then interrupts the attempts under way (their claims' leases end; others send them). */
    @Override
    public synchronized void stop() {
        Periodic p = running;
        running = null;
        if (p != null) {
            p.close();
        }
        ExecutorService sending = senders;
        senders = null;
        if (sending != null) {
            sending.shutdownNow();
            try {
                if (!sending.awaitTermination(15, TimeUnit.SECONDS)) {
                    log.warn("webhook attempts still under way after 15 s of stopping");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running != null;
    }
}
