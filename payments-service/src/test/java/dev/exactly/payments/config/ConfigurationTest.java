package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.postgres.RecoveryPolicy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The environment's forms: database URLs, API key lists, demo mode, recovery backoff. */
class ConfigurationTest {

    private static PaymentsProperties properties(
            String databaseUrl, Map<String, String> keys, String keyList, String operatorKey, String demo) {
        return new PaymentsProperties(
                databaseUrl,
                "",
                keys,
                keyList,
                operatorKey,
                demo,
                Duration.ofSeconds(10),
                Duration.ofHours(24),
                new PaymentsProperties.KeepAlive(true, Duration.ofMinutes(5)),
                16,
                new PaymentsProperties.Recovery(
                        true,
                        Duration.ofSeconds(1),
                        null,
                        5,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(60),
                        Duration.ofMinutes(10)),
                new PaymentsProperties.Processor(Duration.ofSeconds(2), Duration.ofSeconds(10)),
                new PaymentsProperties.CommitBatch(6, 2, Duration.ZERO));
    }

    @Test
    void herokuStyleUrlsBecomeJdbcUrlsWithCredentials() {
        DatabaseUrl url = DatabaseUrl.parse("postgres://pay%40user:s3cr%3At@db.example:6543/payments?sslmode=require");
        assertThat(url.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:6543/payments?sslmode=require");
        assertThat(url.user()).isEqualTo("pay@user");
        assertThat(url.password()).isEqualTo("s3cr:t");
        assertThat(url.toString()).doesNotContain("s3cr");
        assertThat(DatabaseUrl.parse("postgresql://db/x").jdbcUrl()).isEqualTo("jdbc:postgresql://db/x");
        assertThat(DatabaseUrl.parse("jdbc:postgresql://h:5432/test?user=postgres")
                        .jdbcUrl())
                .isEqualTo("jdbc:postgresql://h:5432/test?user=postgres");
        assertThatThrownBy(() -> DatabaseUrl.parse("mysql://h/db")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void demoKeysOnlyWhenNothingIsConfigured() {
        PaymentsProperties bare = properties("", Map.of(), "", "", "auto");
        assertThat(bare.demoMode()).isTrue();
        assertThat(bare.allApiKeys()).containsEntry("sk_demo_acme", "acme").containsEntry("sk_demo_globex", "globex");
        assertThat(bare.effectiveOperatorKey()).isEqualTo(PaymentsProperties.DEMO_OPERATOR_KEY);

        PaymentsProperties real = properties("postgres://h/db", Map.of(), "sk_1=acme, sk_2=globex", "sk_op", "auto");
        assertThat(real.demoMode()).isFalse();
        assertThat(real.allApiKeys()).containsExactlyInAnyOrderEntriesOf(Map.of("sk_1", "acme", "sk_2", "globex"));
        assertThat(real.effectiveOperatorKey()).isEqualTo("sk_op");
        assertThat(properties("postgres://h/db", Map.of(), "", "", "auto").effectiveOperatorKey())
                .isEmpty();
        assertThatThrownBy(() ->
                        properties("", Map.of(), "no-equals-sign", "", "auto").allApiKeys())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void recoveryBacksOffByDoublingUpToTheCapWithFullJitter() {
        RecoveryPolicy policy =
                properties("", Map.of(), "", "", "auto").recovery().policy(20);
        assertThat(policy.maxAttempts()).isEqualTo(5);
        assertThat(policy.parallelism()).isEqualTo(4);
        assertThat(policy.interval()).isEqualTo(Duration.ofSeconds(1));

        java.util.Random random = new java.util.Random(42);
        java.util.Set<Duration> drawn = new java.util.HashSet<>();
        java.util.Map<Integer, Duration> longest = new java.util.HashMap<>();
        for (int attempts = 1; attempts <= 30; attempts++) {
            for (int i = 0; i < 200; i++) {
                Duration d = policy.delayAfter(attempts, random);
                assertThat(d).isBetween(Duration.ZERO, Duration.ofSeconds(60));
                longest.merge(attempts, d, (a, b) -> a.compareTo(b) >= 0 ? a : b);
                drawn.add(d);
            }
        }
        // ceilings 1 s, 2 s, 4 s, 8 s ... capped at 60 s: the longest pause drawn stays under each
        assertThat(longest.get(1)).isLessThanOrEqualTo(Duration.ofSeconds(1)).isGreaterThan(Duration.ofMillis(900));
        assertThat(longest.get(2)).isLessThanOrEqualTo(Duration.ofSeconds(2)).isGreaterThan(Duration.ofSeconds(1));
        assertThat(longest.get(4)).isLessThanOrEqualTo(Duration.ofSeconds(8)).isGreaterThan(Duration.ofSeconds(4));
        assertThat(longest.get(30)).isLessThanOrEqualTo(Duration.ofSeconds(60)).isGreaterThan(Duration.ofSeconds(30));
        assertThat(drawn).as("jittered, not one fixed pause per attempt").hasSizeGreaterThan(1000);
    }

    @Test
    void recoverySettingsOutOfRangeAreRefusedWithThePropertyName() {
        assertThatThrownBy(() -> new PaymentsProperties.Recovery(
                        true,
                        Duration.ofSeconds(1),
                        0,
                        5,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(60),
                        Duration.ofMinutes(10)))
                .hasMessageContaining("exactly.payments.recovery.parallelism between 1 and 256");
        assertThatThrownBy(() -> new PaymentsProperties.Recovery(
                        true,
                        Duration.ofSeconds(1),
                        257,
                        5,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(60),
                        Duration.ofMinutes(10)))
                .hasMessageContaining("exactly.payments.recovery.parallelism between 1 and 256");
        assertThatThrownBy(() -> new PaymentsProperties.Recovery(
                        true,
                        Duration.ofSeconds(1),
                        null,
                        0,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(60),
                        Duration.ofMinutes(10)))
                .hasMessageContaining("exactly.payments.recovery.max-attempts must be positive");
        assertThatThrownBy(() -> new PaymentsProperties.Recovery(
                        true,
                        Duration.ofSeconds(1),
                        null,
                        5,
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(1),
                        Duration.ofMinutes(10)))
                .hasMessageContaining("exactly.payments.recovery.max-retry-delay at least the retry delay");
        assertThatThrownBy(() -> new PaymentsProperties.Recovery(
                        true,
                        Duration.ZERO,
                        null,
                        5,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(60),
                        Duration.ofMinutes(10)))
                .hasMessageContaining("exactly.payments.recovery.interval");
    }

    @Test
    void recoveryParallelismStaysBelowThePoolSizeAndTheKeepAliveCoversTheLease() {
        PaymentsProperties defaults = properties("", Map.of(), "", "", "auto");
        assertThat(defaults.recovery().parallelism(20)).isEqualTo(4);
        assertThat(defaults.recovery().parallelism(6)).isEqualTo(3);
        assertThat(defaults.recovery().parallelism(2)).isEqualTo(1);
        ServiceConfiguration.checkRecoveryParallelism(defaults.recovery().parallelism(2), 2);
        ServiceConfiguration.checkRecoveryParallelism(4, 5);
        assertThatThrownBy(() -> ServiceConfiguration.checkRecoveryParallelism(
                        defaults.recovery().parallelism(1), 1))
                .hasMessageContaining("set exactly.payments.pool-size to 2 or more");
        assertThatThrownBy(() -> ServiceConfiguration.checkRecoveryParallelism(4, 4))
                .hasMessageStartingWith(
                        "exactly.payments.recovery.parallelism (4) must be below exactly.payments.pool-size (4)");
        assertThat(defaults.keepAlive().policy()).isEqualTo(dev.exactly.idempotency.KeepAlive.ofDefaults());
        assertThat(new PaymentsProperties.KeepAlive(false, Duration.ofMinutes(5))
                        .policy()
                        .enabled())
                .isFalse();
        assertThatThrownBy(() -> new PaymentsProperties(
                        "",
                        "",
                        Map.of(),
                        "",
                        "",
                        "auto",
                        Duration.ofMinutes(10),
                        Duration.ofHours(24),
                        new PaymentsProperties.KeepAlive(true, Duration.ofMinutes(5)),
                        16,
                        defaults.recovery(),
                        defaults.processor(),
                        defaults.commitBatch()))
                .hasMessageContaining("keep-alive.max-hold must be at least exactly.payments.lease");
        assertThatThrownBy(() -> new PaymentsProperties(
                        "",
                        "",
                        Map.of(),
                        "",
                        "",
                        "auto",
                        Duration.ofSeconds(10),
                        Duration.ofHours(24),
                        defaults.keepAlive(),
                        16,
                        defaults.recovery(),
                        defaults.processor(),
                        new PaymentsProperties.CommitBatch(8, 2, Duration.ZERO)))
                .hasMessageStartingWith("exactly.payments.commit-batch.max-charges (8) times max-in-flight (2) must be "
                        + "below exactly.payments.clearing-shards (16)");
        assertThat(new PaymentsProperties(
                                "",
                                "",
                                Map.of(),
                                "",
                                "",
                                "auto",
                                Duration.ofSeconds(10),
                                Duration.ofHours(24),
                                defaults.keepAlive(),
                                16,
                                defaults.recovery(),
                                defaults.processor(),
                                new PaymentsProperties.CommitBatch(1, 40, Duration.ZERO))
                        .commitBatch()
                        .batcher(null))
                .isNull();
        assertThatThrownBy(() -> new PaymentsProperties.CommitBatch(6, 2, Duration.ofMillis(-1)))
                .hasMessageStartingWith("exactly.payments.commit-batch.overlap-after must be between 0 and 1000ms");
        assertThatThrownBy(() -> new PaymentsProperties.CommitBatch(6, 2, Duration.ofMillis(1001)))
                .hasMessageStartingWith("exactly.payments.commit-batch.overlap-after must be between 0 and 1000ms");
    }
}
