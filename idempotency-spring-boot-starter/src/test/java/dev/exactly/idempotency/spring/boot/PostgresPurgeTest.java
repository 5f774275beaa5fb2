package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.exactly.idempotency.ClaimOutcome;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.testing.TestPostgres;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * With {@code store=postgres}, expired records are deleted on a schedule, in batches, and counted
 * ({@code exactly.idempotency.purge.rows}); records that have not expired stay. Off with
 * {@code postgres.purge.enabled=false}; other stores have no purge.
 */
class PostgresPurgeTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class,
                    IdempotencyAutoConfiguration.class,
                    IdempotencyMetricsAutoConfiguration.class))
            .withPropertyValues(
                    "exactly.idempotency.routes[0].path=/v1/charges",
                    "exactly.idempotency.store=postgres",
                    "exactly.idempotency.postgres.migrate=true");

    @Test
    void expiredRecordsArePurgedInBatchesAndCountedWhileLiveOnesStay() {
        DataSource schema = TestPostgres.freshSchema("starter_purge");
        runner.withPropertyValues(
                        "spring.datasource.url=" + ((PGSimpleDataSource) schema).getUrl(),
                        "exactly.idempotency.postgres.purge.interval=200ms",
                        "exactly.idempotency.postgres.purge.batch-size=7")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    IdempotencyStore store = context.getBean(IdempotencyStore.class);
                    for (int i = 0; i < 30; i++) {
                        finish(store, "expiring-" + i, Duration.ofMillis(300));
                    }
                    for (int i = 0; i < 5; i++) {
                        finish(store, "kept-" + i, Duration.ofHours(1));
                    }
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> registry.get("exactly.idempotency.purge.rows")
                                            .functionCounter()
                                            .count()
                                    >= 30);
                    assertThat(registry.get("exactly.idempotency.purge.rows")
                                    .functionCounter()
                                    .count())
                            .isEqualTo(30);
                    assertThat(registry.get("exactly.idempotency.purge.failures")
                                    .functionCounter()
                                    .count())
                            .isZero();
                    assertThat(count(schema)).isEqualTo(5);
                    assertThat(store.find(key("kept-0"))).isPresent();
                    ExpiredRecordPurger purger = context.getBean(ExpiredRecordPurger.class);
                    assertThat(purger.isRunning()).isTrue();
                    context.close();
                    assertThat(purger.isRunning())
                            .as("stopped with the context")
                            .isFalse();
                });
    }

    @Test
    void aRunThatFailsIsCountedAndTheNextOneTriesAgain() {
        int[] calls = {0};
        ExpiredRecordPurger purger = new ExpiredRecordPurger(
                batch -> {
                    if (calls[0]++ == 0) {
                        throw new IllegalStateException("database down");
                    }
                    return 4;
                },
                Duration.ofHours(1),
                10);
        purger.purgeOnce();
        purger.purgeOnce();
        assertThat(purger.failures()).isEqualTo(1);
        assertThat(purger.purged()).isEqualTo(4);
        assertThat(purger.runs()).isEqualTo(2);
    }

    @Test
    void thePurgeIsOffWhenDisabledAndBadSettingsStopTheStartup() {
        DataSource schema = TestPostgres.freshSchema("starter_purge_off");
        String url = "spring.datasource.url=" + ((PGSimpleDataSource) schema).getUrl();
        runner.withPropertyValues(url, "exactly.idempotency.postgres.purge.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(ExpiredRecordPurger.class);
                });
        runner.withPropertyValues(
                        url,
                        "exactly.idempotency.postgres.purge.interval=0s",
                        "exactly.idempotency.postgres.purge.batch-size=0")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.postgres.purge.interval must be positive (was 0s)",
                                "exactly.idempotency.postgres.purge.batch-size must be between 1 and 100000 (was 0)"));
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withPropertyValues("exactly.idempotency.routes[0].path=/v1/charges")
                .run(context -> assertThat(context).doesNotHaveBean(ExpiredRecordPurger.class));
    }

    private static ScopeKey key(String name) {
        return new Scope("acme", "POST", "/v1/charges", new IdempotencyKey(name)).toScopeKey();
    }

    private static void finish(IdempotencyStore store, String name, Duration retention) {
        ScopeKey key = key(name);
        ClaimOutcome.Claimed claimed = (ClaimOutcome.Claimed)
                store.claim(key, new Fingerprint("sha256-raw", "f"), Duration.ofMillis(100), retention);
        assertThat(store.complete(key, claimed.owner(), RecordStatus.COMPLETED, StoredResponse.of(201, new byte[] {1})))
                .isTrue();
    }

    private static long count(DataSource schema) throws Exception {
        try (Connection c = schema.getConnection();
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("SELECT count(*) FROM idempotency_records")) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
