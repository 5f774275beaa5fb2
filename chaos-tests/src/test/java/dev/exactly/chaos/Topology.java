package dev.exactly.chaos;

import dev.exactly.testing.TestRedis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The processes of one fault run, all on loopback: PostgreSQL (a fresh schema on the shared server, or a
 * server of its own), a Redis of its own (the hot tier), the processor, and N payment service JVMs that
 * share them, each on its own port. Everything it starts it stops, by PID, in {@link #close()}.
 */
final class Topology implements AutoCloseable {
    /** The tenant of the load, and its API key. */
    static final String TENANT = "chaos";

    static final String API_KEY = "sk_chaos_load";
    static final String OPERATOR_KEY = "sk_chaos_operator";

    /**
     * How the services are configured.
     *
     * @param instances        service JVMs
     * @param lease            the durable owner's lease ({@code exactly.payments.lease})
     * @param recoveryInterval pause between two recovery sweeps
     * @param processorTimeout how long a processor call may take before its outcome is unknown
     * @param poolSize         JDBC connections per instance
     * @param keepAlive        whether owners renew their leases while they work (both tiers; on by default,
     *                         off only for the broken mode that must reproduce a takeover of a slow call)
     */
    record Settings(
            int instances,
            Duration lease,
            Duration recoveryInterval,
            Duration processorTimeout,
            int poolSize,
            boolean keepAlive) {
        Settings(int instances, Duration lease, Duration recoveryInterval, Duration processorTimeout, int poolSize) {
            this(instances, lease, recoveryInterval, processorTimeout, poolSize, true);
        }

        /** The same, with leases that are not renewed: a call slower than the lease is taken over. */
        Settings withoutKeepAlive() {
            return new Settings(instances, lease, recoveryInterval, processorTimeout, poolSize, false);
        }

        /** Two instances, lease 3 s, sweeps every 250 ms, processor timeout 2 s, {@code poolSize} connections each. */
        static Settings twoInstances(int poolSize) {
            return new Settings(2, Duration.ofSeconds(3), Duration.ofMillis(250), Duration.ofSeconds(2), poolSize);
        }

        List<String> arguments() {
            return List.of(
                    "--exactly.payments.demo=false",
                    "--exactly.payments.lease=" + lease.toMillis() + "ms",
                    "--exactly.payments.recovery.interval=" + recoveryInterval.toMillis() + "ms",
                    "--exactly.payments.recovery.retry-delay=250ms",
                    "--exactly.payments.recovery.max-retry-delay=2s",
                    "--exactly.payments.recovery.max-attempts=40",
                    "--exactly.payments.processor.request-timeout=" + processorTimeout.toMillis() + "ms",
                    // the hot tier (the idempotency starter's filter, on Redis through REDIS_URL)
                    "--exactly.idempotency.lease=" + lease.toMillis() + "ms",
                    "--exactly.idempotency.in-flight.max-wait=1s",
                    "--exactly.payments.pool-size=" + poolSize,
                    "--exactly.payments.keep-alive.enabled=" + keepAlive,
                    "--exactly.idempotency.keep-alive.enabled=" + keepAlive,
                    "--logging.level.org.springframework=WARN",
                    "--logging.level.org.flywaydb=WARN",
                    "--logging.level.com.zaxxer=WARN");
        }
    }

    private final Path dir;
    private final Settings settings;
    private final Thread shutdownHook = new Thread(this::stopAll, "chaos-topology-stop");
    private final List<AutoCloseable> started = new ArrayList<>();
    private @Nullable ChaosDatabase database;
    private @Nullable ChaosRedis redis;
    private @Nullable Processor processor;
    private final List<ServiceInstance> instances = new ArrayList<>();
    private @Nullable LoadGenerator load;
    private @Nullable InvariantChecker checker;

    private Topology(Path dir, Settings settings) {
        this.dir = dir;
        this.settings = settings;
    }

    /**
     * Starts everything; if any part fails to start, whatever did start is stopped again.
     *
     * @param database  makes the database, given the run directory
     * @param processor makes the processor, given the run directory
     */
    static Topology start(
            String name,
            Settings settings,
            Function<Path, ChaosDatabase> database,
            Function<Path, Processor> processor,
            LoadGenerator.Settings load) {
        Topology t = new Topology(Workspace.runDirectory(name), settings);
        // if the test JVM is told to stop (a fork timeout), the processes still go, by their PIDs
        Runtime.getRuntime().addShutdownHook(t.shutdownHook);
        try {
            t.startAll(database, processor, load);
            return t;
        } catch (RuntimeException | Error e) {
            t.close();
            throw e;
        }
    }

    private void startAll(
            Function<Path, ChaosDatabase> makeDatabase,
            Function<Path, Processor> makeProcessor,
            LoadGenerator.Settings loadSettings) {
        ChaosDatabase db = makeDatabase.apply(dir);
        started.add(db);
        database = db;
        ChaosRedis r = ChaosRedis.start(dir);
        started.add(r);
        redis = r;
        Processor psp = makeProcessor.apply(dir);
        started.add(psp);
        processor = psp;
        Path jar = Workspace.copy(Workspace.paymentsServiceJar(), dir);
        started.add(() -> java.nio.file.Files.deleteIfExists(jar));
        Map<String, String> env = Map.of(
                "DATABASE_URL", db.serviceUrl(),
                "REDIS_URL", r.uri(),
                "PSP_URL", psp.baseUri().toString(),
                "API_KEYS", API_KEY + "=" + TENANT,
                "OPERATOR_KEY", OPERATOR_KEY);
        for (int i = 0; i < settings.instances(); i++) {
            String instanceName = "svc-" + (char) ('a' + i);
            ServiceInstance instance = new ServiceInstance(
                    instanceName,
                    TestRedis.freePort(),
                    jar,
                    env,
                    settings.arguments(),
                    dir.resolve(instanceName + ".log"));
            instances.add(instance);
            started.add(instance);
        }
        // all at once, as a deployment would: their schema migrations serialise on Flyway's lock
        startTogether(instances);
        LoadGenerator generator = new LoadGenerator(instances, API_KEY, loadSettings);
        started.add(generator);
        load = generator;
        checker = new InvariantChecker(db.dataSource(), psp, TENANT);
    }

    private static void startTogether(List<ServiceInstance> group) {
        group.forEach(ServiceInstance::start);
        Parallel.runAll(
                group.stream()
                        .<Runnable>map(i -> () -> i.awaitReady(Duration.ofMinutes(2)))
                        .toList(),
                group.size() + 1);
    }

    Path directory() {
        return dir;
    }

    Settings settings() {
        return settings;
    }

    ChaosDatabase database() {
        return require(database);
    }

    ChaosRedis redis() {
        return require(redis);
    }

    Processor processor() {
        return require(processor);
    }

    List<ServiceInstance> instances() {
        return List.copyOf(instances);
    }

    ServiceInstance instance(int i) {
        return instances.get(i);
    }

    LoadGenerator load() {
        return require(load);
    }

    InvariantChecker checker() {
        return require(checker);
    }

    /** Starts a stopped or killed instance again on its port and waits until it is ready. */
    Duration restart(ServiceInstance instance) {
        long start = System.nanoTime();
        instance.start();
        instance.awaitReady(Duration.ofMinutes(2));
        return Duration.ofNanos(System.nanoTime() - start);
    }

    private static <T> T require(@Nullable T value) {
        if (value == null) {
            throw new IllegalStateException("the topology is not started");
        }
        return value;
    }

    /** Stops everything it started, newest first, each by its own PID; never throws. */
    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs stopAll, which is idempotent
        }
    }

    private synchronized void stopAll() {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.err.println("[chaos] could not stop " + started.get(i) + ": " + e);
            }
        }
        started.clear();
    }
}
