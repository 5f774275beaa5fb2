package dev.exactly.idempotency.postgres;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of a {@link PostgresIdempotencyStore}. Build with {@link #custom()} or
 * {@link #from(PostgresStoreConfig)}; {@link #ofDefaults()} is what {@link PostgresIdempotencyStore#create}
 * uses.
 *
 * @param tableName                   unqualified table name (resolved through the connection's
 *                                    {@code search_path}); lower-case letters, digits and {@code _}, at
 *                                    most {@value #MAX_TABLE_NAME_LENGTH} characters
 * @param notificationChannel         the LISTEN/NOTIFY channel; the same rule, at most 63 characters
 * @param statementTimeout            query timeout of every statement the store runs (a blocked row lock
 *                                    counts), so that a slow database fails closed quickly: the statement
 *                                    is cancelled (SQLState 57014) at most 0.1 s after it, and a server that
 *                                    answers not even the cancel has the connection aborted one more
 *                                    timeout later (SQLState 08006; the driver first waits out its own
 *                                    {@code cancelSignalTimeout} for the cancel); whole seconds,
 *                                    the unit of JDBC's {@link java.sql.Statement#setQueryTimeout}
 *                                    (at least one)
 * @param loginTimeout                applied to the {@link javax.sql.DataSource} if it has none set
 *                                    (whole seconds, at least one; a pool keeps its own connection timeout)
 * @param listenerPollInterval        how long the listener thread blocks waiting for notifications
 *                                    before it checks whether the store was closed (no round trip)
 * @param listenerHealthCheckInterval how long the listener connection may be silent before the listener
 *                                    checks it with a round trip (to notice a half-open connection)
 * @param maxReconnectBackoff         the longest pause between reconnection attempts of the listener
 * @param sharedStatementLanes        claims of fresh keys the store runs at once on its own connections (and,
 *                                    counted apart, completions) before the next ones queue and share a
 *                                    statement and its commit: when every lane is busy, the first caller in the
 *                                    queue runs the writes of up to {@code maxSharedWrites} queued callers as one
 *                                    statement as soon as a lane is free. 0: every write its own statement.
 *                                    Each lane holds a connection while it runs (four by default)
 * @param maxSharedWrites             the most writes one shared statement carries (at least two)
 */
public record PostgresStoreConfig(
        String tableName,
        String notificationChannel,
        Duration statementTimeout,
        Duration loginTimeout,
        Duration listenerPollInterval,
        Duration listenerHealthCheckInterval,
        Duration maxReconnectBackoff,
        int sharedStatementLanes,
        int maxSharedWrites) {

    /** The table the shipped migration creates. */
    public static final String DEFAULT_TABLE_NAME = "idempotency_records";
    /** The channel completions and releases are announced on. */
    public static final String DEFAULT_NOTIFICATION_CHANNEL = "exactly_idempotency";
    /** Longest table name: leaves room for the index names derived from it within PostgreSQL's 63. */
    public static final int MAX_TABLE_NAME_LENGTH = 40;

    private static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0," + (MAX_TABLE_NAME_LENGTH - 1) + "}");
    private static final Pattern CHANNEL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final PostgresStoreConfig DEFAULTS = new PostgresStoreConfig(
            DEFAULT_TABLE_NAME,
            DEFAULT_NOTIFICATION_CHANNEL,
            Duration.ofSeconds(2),
            Duration.ofSeconds(3),
            Duration.ofMillis(250),
            Duration.ofSeconds(10),
            Duration.ofSeconds(5),
            4,
            32);

    public PostgresStoreConfig {
        Objects.requireNonNull(tableName, "tableName");
        Objects.requireNonNull(notificationChannel, "notificationChannel");
        if (!TABLE_NAME.matcher(tableName).matches()) {
            throw new IllegalArgumentException("tableName must match " + TABLE_NAME.pattern() + ": " + tableName);
        }
        if (!CHANNEL.matcher(notificationChannel).matches()) {
            throw new IllegalArgumentException(
                    "notificationChannel must match " + CHANNEL.pattern() + ": " + notificationChannel);
        }
        requirePositive(statementTimeout, "statementTimeout");
        requirePositive(loginTimeout, "loginTimeout");
        requirePositive(listenerPollInterval, "listenerPollInterval");
        requirePositive(listenerHealthCheckInterval, "listenerHealthCheckInterval");
        requirePositive(maxReconnectBackoff, "maxReconnectBackoff");
        requireWholeSeconds(statementTimeout, "statementTimeout");
        requireWholeSeconds(loginTimeout, "loginTimeout");
        if (listenerPollInterval.toMillis() < 1 || listenerPollInterval.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("listenerPollInterval must be between 1 ms and Integer.MAX_VALUE ms");
        }
        if (sharedStatementLanes < 0 || sharedStatementLanes > 1024) {
            throw new IllegalArgumentException(
                    "sharedStatementLanes must be between 0 (off) and 1024: " + sharedStatementLanes);
        }
        if (maxSharedWrites < 2 || maxSharedWrites > 1000) {
            throw new IllegalArgumentException("maxSharedWrites must be between 2 and 1000: " + maxSharedWrites);
        }
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
    }

    private static void requireWholeSeconds(Duration duration, String name) {
        if (duration.toSeconds() < 1 || duration.toSeconds() > Integer.MAX_VALUE || duration.toNanosPart() != 0) {
            throw new IllegalArgumentException(name + " is a whole number of seconds, at least 1 (JDBC's unit)");
        }
    }

    /** Table {@value #DEFAULT_TABLE_NAME}, channel {@value #DEFAULT_NOTIFICATION_CHANNEL}, 2 s statements. */
    public static PostgresStoreConfig ofDefaults() {
        return DEFAULTS;
    }

    /** A builder starting from the defaults. */
    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    /** A builder starting from {@code base}. */
    public static Builder from(PostgresStoreConfig base) {
        return new Builder(base);
    }

    /** Collects settings; {@link #build()} validates them. */
    public static final class Builder {
        private String tableName;
        private String notificationChannel;
        private Duration statementTimeout;
        private Duration loginTimeout;
        private Duration listenerPollInterval;
        private Duration listenerHealthCheckInterval;
        private Duration maxReconnectBackoff;
        private int sharedStatementLanes;
        private int maxSharedWrites;

        private Builder(PostgresStoreConfig base) {
            this.tableName = base.tableName;
            this.notificationChannel = base.notificationChannel;
            this.statementTimeout = base.statementTimeout;
            this.loginTimeout = base.loginTimeout;
            this.listenerPollInterval = base.listenerPollInterval;
            this.listenerHealthCheckInterval = base.listenerHealthCheckInterval;
            this.maxReconnectBackoff = base.maxReconnectBackoff;
            this.sharedStatementLanes = base.sharedStatementLanes;
            this.maxSharedWrites = base.maxSharedWrites;
        }

        public Builder tableName(String tableName) {
            this.tableName = tableName;
            return this;
        }

        public Builder notificationChannel(String notificationChannel) {
            this.notificationChannel = notificationChannel;
            return this;
        }

        public Builder statementTimeout(Duration statementTimeout) {
            this.statementTimeout = statementTimeout;
            return this;
        }

        public Builder loginTimeout(Duration loginTimeout) {
            this.loginTimeout = loginTimeout;
            return this;
        }

        public Builder listenerPollInterval(Duration listenerPollInterval) {
            this.listenerPollInterval = listenerPollInterval;
            return this;
        }

        public Builder listenerHealthCheckInterval(Duration listenerHealthCheckInterval) {
            this.listenerHealthCheckInterval = listenerHealthCheckInterval;
            return this;
        }

        public Builder maxReconnectBackoff(Duration maxReconnectBackoff) {
            this.maxReconnectBackoff = maxReconnectBackoff;
            return this;
        }

        /** Writes of fresh keys run at once before the next ones share a statement; 0 turns sharing off. */
        public Builder sharedStatementLanes(int sharedStatementLanes) {
            this.sharedStatementLanes = sharedStatementLanes;
            return this;
        }

        /** The most writes one shared statement carries. */
        public Builder maxSharedWrites(int maxSharedWrites) {
            this.maxSharedWrites = maxSharedWrites;
            return this;
        }

        /**
         * The configuration of the settings given.
         *
         * @throws IllegalArgumentException if a setting is invalid
         */
        public PostgresStoreConfig build() {
            return new PostgresStoreConfig(
                    tableName,
                    notificationChannel,
                    statementTimeout,
                    loginTimeout,
                    listenerPollInterval,
                    listenerHealthCheckInterval,
                    maxReconnectBackoff,
                    sharedStatementLanes,
                    maxSharedWrites);
        }
    }
}
