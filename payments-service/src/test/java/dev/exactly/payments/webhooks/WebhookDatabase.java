package dev.exactly.payments.webhooks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.payments.config.DatabaseConfiguration;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.testing.TestPostgres;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fresh, migrated schema of the service for webhook tests, with the outbox and endpoints on it, through a
 * small pool (the PostgreSQL server is shared: connections are few).
 */
final class WebhookDatabase implements AutoCloseable {
    static final String TENANT = "acme";
    final PGSimpleDataSource dataSource;
    private final HikariDataSource pool;
    final Jdbc jdbc;
    final Outbox outbox;
    final WebhookEndpoints endpoints;

    WebhookDatabase(String prefix) {
        dataSource = (PGSimpleDataSource) TestPostgres.freshSchema(prefix);
        DatabaseConfiguration.migrate(dataSource);
        HikariConfig config = new HikariConfig();
        config.setDataSource(dataSource);
        config.setMaximumPoolSize(6);
        config.setPoolName("webhook-test");
        pool = new HikariDataSource(config);
        jdbc = new Jdbc(pool);
        outbox = new Outbox(InstantSource.system());
        endpoints = new WebhookEndpoints(jdbc, InstantSource.system(), true); // receivers on this machine
    }

    @Override
    public void close() {
        pool.close();
    }

    String schema() {
        return dataSource.getCurrentSchema();
    }

    /** A new endpoint of the tenant; its secret. */
    EndpointResult.Created endpoint(String url, String... events) {
        return endpointOf(TENANT, url, events);
    }

    /** A new endpoint of a tenant; its secret. */
    EndpointResult.Created endpointOf(String tenant, String url, String... events) {
        return (EndpointResult.Created) endpoints.create(
                tenant, new EndpointRequest(url, events.length == 0 ? List.of("*") : List.of(events), null));
    }

    /** Records an event in a transaction of its own, as business code would in its own. */
    String record(EventType type, String subject) {
        return recordOf(TENANT, type, subject);
    }

    /** Records an event of a tenant in a transaction of its own. */
    String recordOf(String tenant, EventType type, String subject) {
        return jdbc.inTransaction(c -> outbox.record(
                c, tenant, type, subject, "{\"id\":\"" + subject + "\",\"object\":\"charge\",\"amount\":1999}"));
    }

    /** A worker with the given schedule and short timeouts, allowed to reach the test's loopback receivers. */
    DeliveryWorker worker(int batchSize, int parallelism, RetrySchedule retries) {
        return worker(batchSize, parallelism, retries, true);
    }

    DeliveryWorker worker(int batchSize, int parallelism, RetrySchedule retries, boolean allowPrivateNetworks) {
        return worker(false, batchSize, parallelism, batchSize, retries, Duration.ofSeconds(4), allowPrivateNetworks);
    }

    /**
     * A worker that sends at most {@code perEndpoint} deliveries of one endpoint at once and waits
     * {@code requestTimeout} for an answer (its claims' lease 2 s longer); {@code scheduled}: it sweeps on its
     * own (every 50 ms) once started.
     */
    DeliveryWorker worker(
            boolean scheduled,
            int batchSize,
            int parallelism,
            int perEndpoint,
            RetrySchedule retries,
            Duration requestTimeout,
            boolean allowPrivateNetworks) {
        return worker(
                scheduled,
                Duration.ofMillis(50),
                batchSize,
                parallelism,
                perEndpoint,
                retries,
                requestTimeout,
                allowPrivateNetworks);
    }

    /** As above, sweeping every {@code interval}. */
    DeliveryWorker worker(
            boolean scheduled,
            Duration interval,
            int batchSize,
            int parallelism,
            int perEndpoint,
            RetrySchedule retries,
            Duration requestTimeout,
            boolean allowPrivateNetworks) {
        return worker(
                scheduled,
                interval,
                batchSize,
                parallelism,
                perEndpoint,
                retries,
                requestTimeout,
                allowPrivateNetworks,
                DeliveryWorker.Network.system());
    }

    /** As above, reaching endpoints through {@code network}. */
    DeliveryWorker worker(
            boolean scheduled,
            Duration interval,
            int batchSize,
            int parallelism,
            int perEndpoint,
            RetrySchedule retries,
            Duration requestTimeout,
            boolean allowPrivateNetworks,
            DeliveryWorker.Network network) {
        return new DeliveryWorker(
                jdbc,
                new DeliveryWorker.Settings(
                        scheduled,
                        interval,
                        batchSize,
                        parallelism,
                        perEndpoint,
                        requestTimeout.plusSeconds(2),
                        retries,
                        Duration.ofSeconds(1),
                        requestTimeout,
                        allowPrivateNetworks),
                InstantSource.system(),
                java.util.random.RandomGenerator.getDefault(),
                network);
    }

    /** The delivery rows of an event. */
    List<Map<String, Object>> deliveries(String eventId) {
        return jdbc.query(
                "SELECT * FROM payments_webhook_delivery WHERE event_id = ? ORDER BY id",
                s -> s.setString(1, eventId),
                rs -> {
                    Map<String, Object> row = new java.util.LinkedHashMap<>();
                    for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                        row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
                    }
                    return row;
                });
    }

    Map<String, Object> delivery(String eventId) {
        List<Map<String, Object>> rows = deliveries(eventId);
        if (rows.size() != 1) {
            throw new AssertionError("expected one delivery of " + eventId + ", found " + rows);
        }
        return rows.getFirst();
    }
}
