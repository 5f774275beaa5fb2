package dev.exactly.chaos;

import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.OwnerToken;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.Signals;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.postgresql.ds.PGSimpleDataSource;

/** A {@link LeaseOwnerMain} process: started, watched through its output file, finished, frozen or killed. */
final class LeaseOwnerProcess implements AutoCloseable {
    private final Process process;
    private final Path out;
    private final IdempotencyRequest request;
    private volatile long claimedNanos;

    private LeaseOwnerProcess(Process process, Path out, IdempotencyRequest request) {
        this.process = process;
        this.out = out;
        this.request = request;
    }

    /** Where the owner processes and the test meet: a Redis key prefix, or a PostgreSQL schema. */
    enum Backend {
        REDIS,
        POSTGRES;

        /** A fresh place on this backend (a unique prefix, or a new schema with the store's table). */
        Place open() {
            return switch (this) {
                case REDIS -> new Place(this, "exactly:lease-test:" + UUID.randomUUID() + ":", "");
                case POSTGRES -> {
                    PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("lease_owner");
                    PostgresIdempotencyStore.migrate(schema);
                    yield new Place(this, "", schema.getCurrentSchema());
                }
            };
        }
    }

    /** One backend's place: what the processes and the test's own store are given. */
    record Place(Backend backend, String redisPrefix, String schema) {
        List<String> arguments() {
            return switch (backend) {
                case REDIS -> List.of("store=redis", "redis=" + TestRedis.uri(), "prefix=" + redisPrefix);
                case POSTGRES -> List.of("store=postgres", "jdbc=" + TestPostgres.jdbcUrl(), "schema=" + schema);
            };
        }

        /** The test's own store over the same records (another process's view). */
        IdempotencyStore store() {
            return switch (backend) {
                case REDIS -> LeaseOwnerMain.redis(TestRedis.uri(), redisPrefix);
                case POSTGRES -> LeaseOwnerMain.postgres(TestPostgres.jdbcUrl(), schema);
            };
        }
    }

    /** Starts an owner of {@code key} and waits until it claimed the key. */
    static LeaseOwnerProcess start(Place place, Path directory, String key, Duration lease, boolean keepAlive) {
        try {
            Files.createDirectories(directory);
            Path out = directory.resolve("owner-" + key + ".out");
            List<String> command = new ArrayList<>(List.of(
                    Workspace.java().toString(),
                    "-Xmx64m",
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    System.getProperty("java.class.path"),
                    LeaseOwnerMain.class.getName()));
            command.addAll(place.arguments());
            command.addAll(List.of("key=" + key, "lease=" + lease.toMillis(), "keep-alive=" + keepAlive));
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            LeaseOwnerProcess owner =
                    new LeaseOwnerProcess(process, out, LeaseOwnerMain.request(key, lease, keepAlive));
            try {
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> {
                            if (!process.isAlive()) {
                                throw new IllegalStateException("the owner process exited: " + owner.output());
                            }
                            return owner.output().contains("claimed ");
                        });
            } catch (RuntimeException e) {
                process.destroyForcibly();
                throw e;
            }
            owner.claimedNanos = System.nanoTime();
            return owner;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    IdempotencyRequest request() {
        return request;
    }

    /** When the test saw the claim ({@link System#nanoTime()}). */
    long claimedNanos() {
        return claimedNanos;
    }

    long pid() {
        return process.pid();
    }

    String output() {
        try {
            return Files.exists(out) ? Files.readString(out) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** How many output lines are exactly {@code line}. */
    long count(String line) {
        return output().lines().filter(line::equals).count();
    }

    /** Waits until the owner has renewed its lease {@code renewals} times. */
    void awaitRenewals(int renewals, Duration atMost) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(20)).until(() -> count("renewal RENEWED") >= renewals);
    }

    /** Tells the action to return its outcome. */
    void finish() {
        try {
            OutputStream in = process.getOutputStream();
            in.write("finish\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void kill() {
        Signals.kill(process.pid());
    }

    void freeze() {
        Signals.stop(process.pid());
    }

    void thaw() {
        Signals.resume(process.pid());
    }

    boolean waitForExit(Duration atMost) throws InterruptedException {
        return process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Claims the owner's key through {@code store} every 20 ms until the claim takes it over.
     *
     * @return how long after {@code sinceNanos} the takeover happened
     */
    Duration awaitTakeover(IdempotencyStore store, long sinceNanos, Duration atMost) {
        long[] at = new long[1];
        await().atMost(atMost).pollInterval(Duration.ofMillis(20)).until(() -> {
            ClaimOutcome outcome = store.claim(
                    request.key(),
                    request.fingerprint(),
                    OwnerToken.random(),
                    request.policy().lease(),
                    request.policy().retention());
            if (outcome instanceof ClaimOutcome.Claimed claimed) {
                at[0] = System.nanoTime();
                if (!claimed.takeover()) {
                    throw new IllegalStateException("the key was free, not taken over: " + claimed.record());
                }
                return true;
            }
            return false;
        });
        return Duration.ofNanos(at[0] - sinceNanos);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            Signals.resume(process.pid()); // a frozen process ignores everything but SIGCONT and SIGKILL
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
