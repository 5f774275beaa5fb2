package dev.exactly.idempotency.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PostgresStoreConfigTest {

    @Test
    void defaults() {
        PostgresStoreConfig config = PostgresStoreConfig.ofDefaults();
        assertThat(config.tableName()).isEqualTo("idempotency_records");
        assertThat(config.notificationChannel()).isEqualTo("exactly_idempotency");
        assertThat(config.statementTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(config.loginTimeout()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void fromCopiesAndChangesOnlyWhatIsSet() {
        PostgresStoreConfig base = PostgresStoreConfig.custom()
                .tableName("idem_a")
                .statementTimeout(Duration.ofSeconds(5))
                .build();
        PostgresStoreConfig derived = PostgresStoreConfig.from(base)
                .notificationChannel("idem_events")
                .build();
        assertThat(derived.tableName()).isEqualTo("idem_a");
        assertThat(derived.statementTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(derived.notificationChannel()).isEqualTo("idem_events");
        assertThat(base.notificationChannel()).isEqualTo("exactly_idempotency");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "Idem",
                "1idem",
                "idem-records",
                "idem records",
                "public.idem",
                "idem\"; DROP TABLE x; --",
                "a_forty_one_character_long_table_name_xx1"
            })
    void tableNamesAreStrictIdentifiers(String name) {
        assertThatThrownBy(() -> PostgresStoreConfig.custom().tableName(name).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"idem", "_idem", "idem_records_2", "a_forty_character_long_table_name_xxxxx1"})
    void validTableNames(String name) {
        assertThat(PostgresStoreConfig.custom().tableName(name).build().tableName())
                .isEqualTo(name);
    }

    @Test
    void channelsAndDurationsAreChecked() {
        assertThatThrownBy(() ->
                        PostgresStoreConfig.custom().notificationChannel("a;b").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PostgresStoreConfig.custom()
                        .statementTimeout(Duration.ZERO)
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PostgresStoreConfig.custom()
                        .statementTimeout(Duration.ofMillis(1500))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PostgresStoreConfig.custom()
                        .loginTimeout(Duration.ofSeconds(-1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PostgresStoreConfig.custom()
                        .listenerPollInterval(Duration.ofNanos(10))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
    }
}
