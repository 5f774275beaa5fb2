package dev.exactly.chaos;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.KeepAlive;
import dev.exactly.idempotency.LeaseLostException;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.redis.RedisStoreConfig;
import dev.exactly.idempotency.spi.IdempotencyStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An owner process for the lease tests: claims one key through the engine on Redis or PostgreSQL and
 * runs an action that holds it until told to finish (a line {@code finish} on standard input) or until
 * the process is killed or frozen. It reports on standard output, one event per line:
 * {@code claimed <owner> <takeover>}, {@code renewal <RESULT>}, {@code lost=<isLost>} and
 * {@code result EXECUTED|LEASE_LOST}.
 *
 * <pre>
 * java -cp … dev.exactly.chaos.LeaseOwnerMain store=redis redis=redis://127.0.0.1:6379 prefix=p: key=k lease=3000 keep-alive=true
 * java -cp … dev.exactly.chaos.LeaseOwnerMain store=postgres jdbc=jdbc:postgresql://… schema=s key=k lease=3000 keep-alive=true
 * </pre>
 */
public final class LeaseOwnerMain {
    static final Duration RETENTION = Duration.ofMinutes(10);

    private LeaseOwnerMain() {}

    /** The request both the owner process and the test send for {@code key}: same scope, same fingerprint. */
    static IdempotencyRequest request(String key, Duration lease, boolean keepAlive) {
        IdempotencyPolicy policy = IdempotencyPolicy.custom()
                .lease(lease)
                .retention(RETENTION)
                .keepAlive(keepAlive ? KeepAlive.ofDefaults() : KeepAlive.disabled())
                .build();
        return IdempotencyRequest.of(
                new Scope("lease-test", "POST", "/v1/charges", new IdempotencyKey(key)),
                new Fingerprint("sha256-jcs", "fp-" + Integer.toHexString(key.hashCode())),
                policy);
    }

    /** The Redis store under {@code prefix}. */
    static RedisIdempotencyStore redis(String uri, String prefix) {
        return RedisIdempotencyStore.create(
                uri, RedisStoreConfig.custom().keyPrefix(prefix).build());
    }

    /** The PostgreSQL store in {@code schema} (its table already created). */
    static PostgresIdempotencyStore postgres(String jdbcUrl, String schema) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(jdbcUrl);
        dataSource.setCurrentSchema(schema);
        return PostgresIdempotencyStore.create(dataSource);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("arguments are name=value: " + arg);
            }
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        IdempotencyStore store = switch (options.get("store")) {
            case "redis" -> redis(options.get("redis"), options.get("prefix"));
            case "postgres" -> postgres(options.get("jdbc"), options.get("schema"));
            case null, default -> throw new IllegalArgumentException("store=redis|postgres");
        };
        IdempotencyRequest request = request(
                options.get("key"),
                Duration.ofMillis(Long.parseLong(options.get("lease"))),
                Boolean.parseBoolean(options.get("keep-alive")));
        IdempotencyEngine engine = IdempotencyEngine.builder(store)
                .listener(new IdempotencyListener() {
                    @Override
                    public void onRenewal(IdempotencyRequest r, RenewalResult result) {
                        say("renewal " + result);
                    }
                })
                .build();
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            IdempotentResult result = engine.execute(request, lease -> {
                say("claimed " + lease.owner() + " " + lease.takeover());
                String line;
                while ((line = input.readLine()) != null && !line.equals("finish")) {
                    // only "finish" ends the action
                }
                say("lost=" + lease.isLost());
                return Outcome.complete(
                        StoredResponse.of(201, "{\"by\":\"owner process\"}".getBytes(StandardCharsets.UTF_8)));
            });
            say("result " + result.kind());
        } catch (LeaseLostException lost) {
            say("result LEASE_LOST");
        } finally {
            store.close();
        }
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
