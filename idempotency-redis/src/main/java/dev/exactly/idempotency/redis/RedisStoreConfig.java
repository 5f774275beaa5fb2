package dev.exactly.idempotency.redis;

import dev.exactly.idempotency.ScopeKey;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link RedisIdempotencyStore}. Immutable; build with {@link #ofDefaults()},
 * {@link #custom()} or {@link #from(RedisStoreConfig)}.
 *
 * @param keyPrefix      prefix of every key and of the change channel (default {@value #DEFAULT_KEY_PREFIX});
 *                       1-128 printable ASCII characters without <code>{</code> or <code>}</code>, so that
 *                       the scope's hash tag decides the Cluster slot
 * @param commandTimeout how long one command (one script, one read) may take before the store reports
 *                       itself unavailable (default 2 s; the store sees it within an eighth of it more, at
 *                       most 50 ms)
 * @param connectTimeout how long opening a connection may take (default 2 s); applies to clients the
 *                       store creates itself ({@link RedisIdempotencyStore#create(String, RedisStoreConfig)}),
 *                       a client passed in keeps its own socket options
 * @param evictionAllowed whether the store may run on a Redis that evicts keys when its memory is full (a
 *                       {@code maxmemory} with a {@code maxmemory-policy} other than {@code noeviction}).
 *                       Default {@code false}: such a Redis may drop a finished record, and the retry it
 *                       should have answered runs the action again, so the store refuses it (every call
 *                       {@code StoreUnavailableException}, naming the setting) until its policy is
 *                       {@code noeviction}. Allow it only where a durable store behind this one decides
 *                       (a hot tier)
 */
public record RedisStoreConfig(
        String keyPrefix, Duration commandTimeout, Duration connectTimeout, boolean evictionAllowed) {

    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "exactly:idem:";
    /** The default command timeout: 2 seconds. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);
    /** The default connect timeout: 2 seconds. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private static final RedisStoreConfig DEFAULTS =
            new RedisStoreConfig(DEFAULT_KEY_PREFIX, DEFAULT_COMMAND_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, false);

    /** Settings that refuse an evicting Redis ({@code evictionAllowed} false). */
    public RedisStoreConfig(String keyPrefix, Duration commandTimeout, Duration connectTimeout) {
        this(keyPrefix, commandTimeout, connectTimeout, false);
    }

    public RedisStoreConfig {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (keyPrefix.isEmpty() || keyPrefix.length() > 128) {
            throw new IllegalArgumentException("keyPrefix must be 1-128 characters");
        }
        for (int i = 0; i < keyPrefix.length(); i++) {
            char c = keyPrefix.charAt(i);
            if (c < 0x21 || c > 0x7e || c == '{' || c == '}') {
                throw new IllegalArgumentException(
                        "keyPrefix must be printable ASCII without spaces, '{' or '}' (the hash tag decides the slot)");
            }
        }
        requireMillis(commandTimeout, "commandTimeout");
        requireMillis(connectTimeout, "connectTimeout");
    }

    private static void requireMillis(Duration timeout, String name) {
        if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new IllegalArgumentException(name + " must be between 1 ms and 5 minutes");
        }
    }

    /** Prefix {@value #DEFAULT_KEY_PREFIX}, 2 s command and connect timeouts. */
    public static RedisStoreConfig ofDefaults() {
        return DEFAULTS;
    }

    /** A builder starting from the defaults. */
    public static Builder custom() {
        return new Builder(DEFAULTS);
    }

    /** A builder starting from {@code base}. */
    public static Builder from(RedisStoreConfig base) {
        return new Builder(base);
    }

    /**
     * The key of a scope's record: {@code keyPrefix + "{" + hash + "}:r"}, one string value (the layout
     * of {@code RecordValue}). The braces are a Cluster hash tag, so every key of one scope lands in one
     * slot. (Earlier versions kept a hash at {@code ...:rec}; those keys are not read.)
     */
    public String recordKey(ScopeKey key) {
        return keyPrefix + key.hashTag() + ":r";
    }

    /**
     * The key of a scope's waiter marker: {@code keyPrefix + "{" + hash + "}:w"}, set (with a TTL) by a
     * process before it waits for the scope; completions and releases publish only while it exists.
     */
    public String waiterKey(ScopeKey key) {
        return keyPrefix + key.hashTag() + ":w";
    }

    /** The pub/sub channel on which finished and released scopes are announced: {@code keyPrefix + "changes"}. */
    public String changesChannel() {
        return keyPrefix + "changes";
    }

    /** Validating builder; {@link #build()} checks every setting. */
    public static final class Builder {
        private String keyPrefix;
        private Duration commandTimeout;
        private Duration connectTimeout;
        private boolean evictionAllowed;

        private Builder(RedisStoreConfig base) {
            this.keyPrefix = base.keyPrefix;
            this.commandTimeout = base.commandTimeout;
            this.connectTimeout = base.connectTimeout;
            this.evictionAllowed = base.evictionAllowed;
        }

        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
            return this;
        }

        public Builder commandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        /**
         * Whether a Redis that evicts keys when its memory is full is accepted (default {@code false}); only
         * for a hot tier in front of a durable store that decides.
         */
        public Builder evictionAllowed(boolean evictionAllowed) {
            this.evictionAllowed = evictionAllowed;
            return this;
        }

        public RedisStoreConfig build() {
            return new RedisStoreConfig(keyPrefix, commandTimeout, connectTimeout, evictionAllowed);
        }
    }
}
