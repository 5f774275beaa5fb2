package dev.exactly.examples.plain;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyException;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyKeyReusedException;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.InvalidIdempotencyKeyException;
import dev.exactly.idempotency.JsonTooDeepException;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.PayloadTooLargeException;
import dev.exactly.idempotency.RequestInFlightException;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresSchema;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@code POST /v1/charges} on the JDK's HTTP server, guarded by the idempotency engine without any
 * framework: the README's "Guarding an action", whole. Run it with
 * {@code java dev.exactly.examples.plain.ChargeServer store=memory|redis|postgres [port=8080]
 * [redis=redis://localhost:6379] [jdbc=jdbc:postgresql://localhost:5432/test?user=postgres]
 * [bank-latency=200ms]}; the API key {@code sk_test_4f9a2c} is tenant {@code acme}.
 */
public final class ChargeServer implements AutoCloseable {
    private static final String ROUTE = "/v1/charges";
    private static final int MAX_BODY_BYTES = Fingerprinter.DEFAULT_MAX_BODY_BYTES;

    private final Map<String, String> tenantsByApiKey = Map.of("sk_test_4f9a2c", "acme");
    private final AtomicLong charges = new AtomicLong();
    private final Duration bankLatency;
    private final IdempotencyStore store;
    private final IdempotencyEngine engine;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    private ChargeServer(Map<String, String> settings) throws IOException {
        this.bankLatency = millis(settings.getOrDefault("bank-latency", "0ms"));
        String storeName = settings.getOrDefault("store", "memory");
        String redisUri = settings.getOrDefault("redis", "redis://localhost:6379");
        DataSource dataSource =
                dataSource(settings.getOrDefault("jdbc", "jdbc:postgresql://localhost:5432/test?user=postgres"));

        IdempotencyStore store = switch (storeName) {
            case "memory" -> InMemoryIdempotencyStore.create(); // idempotency-core: this process only
            case "redis" -> RedisIdempotencyStore.create(redisUri); // idempotency-redis
            case "postgres" -> { // idempotency-postgres
                PostgresSchema.migrate(dataSource); // creates its table if missing
                yield PostgresIdempotencyStore.create(dataSource);
            }
            default -> throw new IllegalArgumentException("store must be memory, redis or postgres: " + storeName);
        };
        IdempotencyEngine engine = IdempotencyEngine.builder(store).build();

        this.store = store;
        this.engine = engine;
        this.server = HttpServer.create(
                new InetSocketAddress("127.0.0.1", Integer.parseInt(settings.getOrDefault("port", "8080"))), 0);
        server.setExecutor(threads);
        server.createContext(ROUTE, this::handle);
        server.start();
    }

    /** Starts the server; {@code settings} as the class comment describes. */
    public static ChargeServer start(Map<String, String> settings) throws IOException {
        return new ChargeServer(settings);
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> settings = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are name=value: " + arg);
            }
            settings.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        ChargeServer server = start(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        System.out.println("listening on http://127.0.0.1:" + server.port() + ROUTE);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("POST")
                    || !exchange.getRequestURI().getPath().equals(ROUTE)) {
                send(exchange, 404, Map.of(), problem(404, "not_found", "POST " + ROUTE + " only"));
                return;
            }
            String tenantId = tenant(exchange.getRequestHeaders().getFirst("Authorization"));
            if (tenantId == null) {
                send(
                        exchange,
                        401,
                        Map.of("WWW-Authenticate", "Bearer"),
                        problem(401, "tenant_unresolved", "send Authorization: Bearer <api key>"));
                return;
            }
            String keyHeader = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            byte[] body = readBody(exchange.getRequestBody());
            if (body.length > MAX_BODY_BYTES) {
                // the rest of the body stays unread: the connection cannot carry another request
                exchange.getResponseHeaders().set("Connection", "close");
            }
            try {
                guarded(exchange, tenantId, keyHeader, body);
            } catch (Exception e) {
                // chargeCard threw: the engine released the key, so a retry runs it again
                send(
                        exchange,
                        500,
                        Map.of(),
                        problem(500, "internal_error", "the charge failed; retry with the same key"));
            }
        }
    }

    /** The README's "Guarding an action": one charge per tenant and key, whatever the retries. */
    private void guarded(HttpExchange exchange, String tenantId, @Nullable String keyHeader, byte[] body)
            throws Exception {
        try {
            Scope scope = new Scope(tenantId, "POST", "/v1/charges", IdempotencyKey.parse(keyHeader));
            Fingerprint fingerprint =
                    Fingerprinter.ofDefaults().fingerprint("POST", "/v1/charges", body, "application/json");
            IdempotencyRequest request = IdempotencyRequest.of(scope, fingerprint, IdempotencyPolicy.ofDefaults());

            IdempotentResult result = engine.execute(request, lease -> Outcome.complete(chargeCard(body)));
            // chargeCard ran at most once for this tenant and key; a retry gets its response, result.replayed() true
            send(exchange, result.response(), result.replayed());
        } catch (IdempotencyException e) {
            int status = switch (e) {
                case InvalidIdempotencyKeyException invalid -> 400; // missing, empty, too long, not printable ASCII
                case PayloadTooLargeException tooLarge -> 413; // too large to fingerprint
                case JsonTooDeepException tooDeep -> 400; // JSON nested deeper than the fingerprinter reads
                case IdempotencyKeyReusedException reused -> 422; // same key, another request: a client bug
                case RequestInFlightException inFlight -> 409; // the first one still runs: retry later
                case LeaseLostException lost -> 409; // this run outlived its lease: retry, same key
                case StoreUnavailableException down -> 503; // fail closed: chargeCard did not run
            };
            sendProblem(exchange, status, e);
        }
    }

    /** The side effect to run once per key: here a stand-in for the bank, which numbers its charges. */
    private StoredResponse chargeCard(byte[] body) throws InterruptedException {
        Thread.sleep(bankLatency); // a slow bank (an option), so that duplicates overlap
        String json = "{\"id\":\"ch_" + charges.incrementAndGet() + "\",\"status\":\"succeeded\"}";
        return new StoredResponse(
                201, Map.of("Content-Type", List.of("application/json")), json.getBytes(StandardCharsets.UTF_8));
    }

    private @Nullable String tenant(@Nullable String authorization) {
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            return null;
        }
        return tenantsByApiKey.get(authorization.substring("Bearer ".length()).strip());
    }

    private static byte[] readBody(InputStream in) throws IOException {
        // one byte more than the limit, so that the fingerprinter can refuse a larger body (413)
        return in.readNBytes(MAX_BODY_BYTES + 1);
    }

    /** {@code 200ms}. */
    private static Duration millis(String value) {
        if (!value.endsWith("ms")) {
            throw new IllegalArgumentException("a duration in milliseconds, e.g. 200ms: " + value);
        }
        return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
    }

    private static DataSource dataSource(String jdbcUrl) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(jdbcUrl);
        return dataSource;
    }

    private static byte[] problem(int status, String code, String detail) {
        String json = "{\"status\":" + status + ",\"code\":\"" + code + "\",\"detail\":\""
                + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static void send(HttpExchange exchange, StoredResponse response, boolean replayed) throws IOException {
        response.headers()
                .forEach((name, values) -> exchange.getResponseHeaders().put(name, values));
        if (replayed) {
            exchange.getResponseHeaders().set("Idempotent-Replayed", "true");
        }
        exchange.sendResponseHeaders(response.status(), response.bodyLength());
        try (OutputStream out = exchange.getResponseBody()) {
            response.writeBodyTo(out);
        }
    }

    /** A problem+json answer with the exception's code; {@code Retry-After} for a key in use. */
    private static void sendProblem(HttpExchange exchange, int status, IdempotencyException e) throws IOException {
        Map<String, String> headers = e instanceof RequestInFlightException inFlight
                ? Map.of("Retry-After", String.valueOf(inFlight.retryAfter().toSeconds()))
                : Map.of();
        send(exchange, status, headers, problem(status, e.code(), e.getMessage()));
    }

    private static void send(HttpExchange exchange, int status, Map<String, String> headers, byte[] problem)
            throws IOException {
        headers.forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
        exchange.sendResponseHeaders(status, problem.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(problem);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.close();
        store.close();
    }
}
