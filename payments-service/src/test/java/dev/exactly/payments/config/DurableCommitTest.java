package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.exactly.testing.OwnPostgres;
import dev.exactly.testing.TestPostgres;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A charge's first phase must be on disk before the processor is asked to move money: a commit that is lost
 * in a crash after the processor charged leaves a charge the service no longer knows, and the retry charges
 * again under a new charge id. The service's connections therefore never commit asynchronously, whatever the
 * server's or the role's default ({@code synchronous_commit = off}, which the embedded server and many
 * tuning guides set); a stronger setting is kept. A server that does not flush at all ({@code fsync = off})
 * cannot be overruled per connection: the service says so at startup.
 */
@ExtendWith(OutputCaptureExtension.class)
class DurableCommitTest {

    private static PaymentsProperties properties(String databaseUrl) {
        return new Binder(new MapConfigurationPropertySource(Map.of("exactly.payments.database-url", databaseUrl)))
                .bind("exactly.payments", PaymentsProperties.class)
                .get();
    }

    private static String setting(HikariDataSource dataSource, String name) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static HikariDataSource pool(String jdbcUrl) {
        return new DatabaseConfiguration()
                .dataSource(
                        properties(jdbcUrl),
                        new DatabaseConfiguration.EmbeddedDatabase(null, null),
                        2,
                        Duration.ofSeconds(30));
    }

    @ParameterizedTest
    @CsvSource({"off, on", "on, on", "local, local", "remote_apply, remote_apply"})
    void theServicesConnectionsNeverCommitAsynchronously(String configured, String expected) throws Exception {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("durable");
        String url = TestPostgres.jdbcUrl();
        String jdbcUrl = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema.getCurrentSchema()
                + "&options=" + URLEncoder.encode("-c synchronous_commit=" + configured, StandardCharsets.UTF_8);
        try (HikariDataSource dataSource = pool(jdbcUrl)) {
            assertThat(setting(dataSource, "synchronous_commit")).isEqualTo(expected);
        }
    }

    @Test
    void aServerThatDoesNotFlushIsReportedAtStartup(@TempDir Path dir, CapturedOutput output) throws Exception {
        try (OwnPostgres server = OwnPostgres.start(dir, Map.of("fsync", "off"))) {
            try (HikariDataSource dataSource = pool(server.jdbcUrl())) {
                assertThat(setting(dataSource, "fsync")).isEqualTo("off");
            }
            assertThat(output.getAll()).contains("fsync = off").contains("committed charges");
        }
    }

    @Test
    void aServerThatFlushesIsNotReported(CapturedOutput output) throws Exception {
        PGSimpleDataSource schema = (PGSimpleDataSource) TestPostgres.freshSchema("durable");
        String url = TestPostgres.jdbcUrl();
        try (HikariDataSource dataSource =
                pool(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema.getCurrentSchema())) {
            assertThat(setting(dataSource, "fsync")).isEqualTo("on");
        }
        assertThat(output.getAll()).doesNotContain("fsync = off");
    }
}
