package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.app.TestApplication;
import dev.exactly.testing.TestPostgres;
import dev.exactly.testing.TestRedis;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * Setting up the PostgreSQL store cannot fail silently: without a DataSource, without its table, or on a
 * table of another shape, the application does not start, and the message names the fix; with the
 * table made by the starter or by Flyway, it starts.
 */
@ExtendWith(OutputCaptureExtension.class)
class PostgresSetupTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    FlywayAutoConfiguration.class,
                    IdempotencyAutoConfiguration.class))
            .withPropertyValues(
                    "exactly.idempotency.routes[0].path=/v1/charges",
                    "exactly.idempotency.store=postgres",
                    "spring.flyway.enabled=false");

    private static String[] dataSource(DataSource schema) {
        return new String[] {"spring.datasource.url=" + ((PGSimpleDataSource) schema).getUrl()};
    }

    @Test
    void withoutTheTableTheApplicationDoesNotStartAndIsToldBothWaysToCreateIt() {
        DataSource schema = TestPostgres.freshSchema("setup_missing");
        runner.withPropertyValues(dataSource(schema))
                .run(
                        context -> assertThat(problems(context))
                                .singleElement()
                                .asString()
                                .startsWith(
                                        "exactly.idempotency.store=postgres, but the idempotency table idempotency_records does "
                                                + "not exist in the search_path \"setup_missing_")
                                .contains(
                                        "); set exactly.idempotency.postgres.migrate=true to create the table "
                                                + "(exactly.idempotency.postgres.table-name) at startup, or add classpath:db/idempotency to "
                                                + "spring.flyway.locations (the migration db/idempotency/V1__idempotency_records.sql)"));
    }

    @Test
    void migrateCreatesTheTableAndTheApplicationStarts() {
        DataSource schema = TestPostgres.freshSchema("setup_migrate");
        runner.withPropertyValues(dataSource(schema))
                .withPropertyValues("exactly.idempotency.postgres.migrate=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(PostgresIdempotencyStore.class);
                });
    }

    @Test
    void flywayCreatesTheTableBeforeTheStoreChecksIt() {
        DataSource schema = TestPostgres.freshSchema("setup_flyway");
        runner.withPropertyValues(dataSource(schema))
                .withPropertyValues("spring.flyway.enabled=true", "spring.flyway.locations=classpath:db/idempotency")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(PostgresIdempotencyStore.class);
                    // every migration the store ships, counted on the classpath (V1 to the newest)
                    long shipped = new PathMatchingResourcePatternResolver()
                            .getResources("classpath*:db/idempotency/V*__*.sql")
                            .length;
                    assertThat(shipped).isGreaterThanOrEqualTo(8);
                    assertThat(count(schema, "SELECT count(*) FROM flyway_schema_history WHERE success"))
                            .as("every migration")
                            .isEqualTo(shipped);
                });
    }

    @Test
    void aTableOfThatNameThatIsNotTheStoresStopsTheStartupEvenWithMigrate() {
        DataSource schema = TestPostgres.freshSchema("setup_foreign");
        execute(schema, "CREATE TABLE idempotency_records (id bigint PRIMARY KEY, status text)");
        runner.withPropertyValues(dataSource(schema))
                .withPropertyValues("exactly.idempotency.postgres.migrate=true")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.store=postgres, but the idempotency table setup_foreign_")
                        .contains(".idempotency_records is not the store's table: column scope_key (text) is missing;")
                        .contains("configure another table name for the store; then set "
                                + "exactly.idempotency.postgres.migrate=true to create the table "
                                + "(exactly.idempotency.postgres.table-name) at startup"));
    }

    @Test
    void anUnreachableDatabaseDoesNotStopTheStartupButIsLogged(CapturedOutput output) {
        runner.withPropertyValues(
                        "spring.datasource.url=jdbc:postgresql://127.0.0.1:" + TestRedis.freePort()
                                + "/test?user=postgres",
                        "spring.datasource.hikari.connection-timeout=1000")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output)
                            .contains(
                                    "Could not check the idempotency table at startup; guarded requests "
                                            + "answer 503 until PostgreSQL answers: idempotency schema check of idempotency_records:");
                });
    }

    @Test
    void aMigrationThatCannotRunStopsTheStartupAndSaysWhatToCheck() {
        runner.withPropertyValues(
                        "spring.datasource.url=jdbc:postgresql://127.0.0.1:" + TestRedis.freePort()
                                + "/test?user=postgres",
                        "spring.datasource.hikari.connection-timeout=1000",
                        "exactly.idempotency.postgres.migrate=true")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.postgres.migrate=true, but the table could not be created: "
                                + "idempotency migration of idempotency_records: ")
                        .endsWith(". Check spring.datasource.url, .username and .password, and that PostgreSQL is up"));
    }

    @Test
    void withoutTheJdbcStarterTheMessageNamesIt() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("org.springframework.boot.jdbc.autoconfigure"))
                .withPropertyValues(
                        "exactly.idempotency.store=postgres",
                        "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.store=postgres needs one DataSource bean, and there is none: add the "
                                        + "dependency org.springframework.boot:spring-boot-starter-jdbc, which makes a pooled "
                                        + "DataSource from spring.datasource.url (also .username, .password) "
                                        + "(spring.datasource.url is set, but without that starter nothing reads it), or "
                                        + "define a DataSource @Bean"));
    }

    @Test
    void withTheJdbcStarterButNoUrlTheMessageNamesTheProperty() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withPropertyValues("exactly.idempotency.store=postgres")
                .run(
                        context -> assertThat(problems(context))
                                .containsExactly(
                                        "exactly.idempotency.store=postgres needs one DataSource bean, and there is none: set "
                                                + "spring.datasource.url (also .username, .password), or define a DataSource @Bean"));
    }

    @Test
    void severalDataSourcesWithoutAPrimaryOneAreNamed() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withBean("one", DataSource.class, () -> TestPostgres.freshSchema("setup_one"))
                .withBean("two", DataSource.class, () -> TestPostgres.freshSchema("setup_two"))
                .withPropertyValues("exactly.idempotency.store=postgres")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.store=postgres needs one DataSource bean, and there are 2: mark the one "
                                        + "for idempotency records @Primary"));
    }

    @Test
    void aRealApplicationWithoutTheTableDoesNotStartAndTheReportSaysWhy(CapturedOutput output) {
        DataSource schema = TestPostgres.freshSchema("setup_report");
        SpringApplication application = new SpringApplication(TestApplication.class);
        assertThatThrownBy(() -> {
                    try (ConfigurableApplicationContext ignored = application.run(
                            "--server.port=0",
                            "--spring.autoconfigure.exclude=",
                            "--spring.datasource.url=" + ((PGSimpleDataSource) schema).getUrl(),
                            "--exactly.idempotency.store=postgres")) {
                        throw new AssertionError("started without the table");
                    }
                })
                .hasRootCauseInstanceOf(InvalidIdempotencyPropertiesException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("does not exist in the search_path")
                .contains("set exactly.idempotency.postgres.migrate=true to create the table");
    }

    private static void execute(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long count(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                var rows = s.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
