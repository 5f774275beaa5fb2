package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.RepeatedTest;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Instances of the service started at once against a database they have never seen (a first deployment of
 * several replicas, a test that starts two) all migrate it at startup: every one of them starts, and each
 * migration runs once. Flyway's own lock does not cover its first look at a schema: before the service took a
 * lock of its own around the three sets, an instance that found a schema history table another had just
 * created, still empty, tried to baseline it and failed to start (one staggered run in five here).
 */
class ConcurrentStartTest {
    private static final int INSTANCES = 4;
    private static final int STAGGERED = 8;
    private static final long STAGGER_MILLIS = 40;

    @RepeatedTest(3)
    void instancesStartingAtOnceOnAFreshSchemaAllStartAndEachMigrationRunsOnce() throws Exception {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("concurrent_start");
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> instances = new ArrayList<>();
        try (ExecutorService threads = Executors.newFixedThreadPool(INSTANCES)) {
            for (int i = 0; i < INSTANCES; i++) {
                instances.add(migrateWhenReleased(threads, ownDataSource(schema), start));
            }
            start.countDown();
            for (Future<?> instance : instances) {
                instance.get(); // throws what the instance's migration threw
            }
        }
        assertEachMigrationRanOnce(schema);
    }

    /**
     * The window that failed: an instance arriving while another creates a set's schema history table, found
     * existing and still empty. Instances released a few milliseconds apart land in it now and then.
     */
    @RepeatedTest(8)
    void instancesStartingAFewMillisecondsApartAllStart() throws Exception {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("concurrent_start");
        List<Future<?>> instances = new ArrayList<>();
        try (ScheduledExecutorService threads = Executors.newScheduledThreadPool(STAGGERED)) {
            for (int i = 0; i < STAGGERED; i++) {
                DataSource own = ownDataSource(schema);
                instances.add(threads.schedule(
                        () -> {
                            DatabaseConfiguration.migrate(own);
                            return null;
                        },
                        i * STAGGER_MILLIS,
                        TimeUnit.MILLISECONDS));
            }
            for (Future<?> instance : instances) {
                instance.get();
            }
        }
        assertEachMigrationRanOnce(schema);
    }

    private static Future<?> migrateWhenReleased(ExecutorService threads, DataSource own, CountDownLatch release) {
        return threads.submit(() -> {
            release.await();
            DatabaseConfiguration.migrate(own);
            return null;
        });
    }

    private static void assertEachMigrationRanOnce(PGSimpleDataSource schema) throws Exception {
        for (String[] set : DatabaseConfiguration.MIGRATIONS) {
            try (Connection c = schema.getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT version), bool_and(success) FROM "
                            + set[1] + " WHERE version IS NOT NULL AND type <> 'BASELINE'")) {
                rs.next();
                assertThat(rs.getInt(1))
                        .as("migrations applied from %s", set[0])
                        .isPositive()
                        .isEqualTo(rs.getInt(2));
                assertThat(rs.getBoolean(3))
                        .as("every migration of %s succeeded", set[0])
                        .isTrue();
            }
        }
    }

    /** A data source of its own for each instance, on the same schema. */
    private static DataSource ownDataSource(PGSimpleDataSource schema) {
        PGSimpleDataSource own = new PGSimpleDataSource();
        own.setURL(schema.getURL());
        own.setUser(schema.getUser());
        own.setPassword(schema.getPassword());
        own.setCurrentSchema(schema.getCurrentSchema());
        return own;
    }
}
