package dev.exactly.payments.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jspecify.annotations.Nullable;

/** What the migration tests share: Flyway up to a version, and a charge's scope hash as the service computes it. */
final class MigrationSupport {
    private MigrationSupport() {}

    /**
     * Runs the migrations of {@code location} on {@code dataSource}'s schema, with their own history table,
     * up to {@code target} (every one when null).
     */
    static void flyway(DataSource dataSource, String location, String table, @Nullable String target) {
        var config = Flyway.configure()
                .dataSource(dataSource)
                .locations(location)
                .table(table)
                .baselineOnMigrate(true)
                .baselineVersion("0");
        if (target != null) {
            config.target(target);
        }
        config.load().migrate();
    }

    /** The SHA-256 of {@code text}'s UTF-8 bytes in lowercase hex: a scope key's hash. */
    static String sha256Hex(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
