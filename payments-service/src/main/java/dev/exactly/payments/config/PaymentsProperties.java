package dev.exactly.payments.config;

import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.postgres.RecoveryPolicy;
import dev.exactly.payments.db.CommitBatcher;
import dev.exactly.payments.db.Jdbc;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the payment service ({@code exactly.payments.*}). The environment variables of the
 * README map onto them in {@code application.yml}: {@code DATABASE_URL}, {@code PSP_URL},
 * {@code API_KEYS}, {@code OPERATOR_KEY} ({@code REDIS_URL} selects the hot tier, see
 * {@code exactly.idempotency.*}).
 *
 * @param databaseUrl    {@code postgres://user:pass@host:port/db} or a {@code jdbc:postgresql:} URL; empty:
 *                       start an embedded PostgreSQL
 * @param pspUrl         base URL of a running processor; empty: an in-process simulator
 * @param apiKeys        API key to tenant id (tenants: lower-case letters, digits, {@code _} and {@code -})
 * @param apiKeyList     more keys as {@code key=tenant,key=tenant} (the {@code API_KEYS} variable)
 * @param operatorKey    the API key of the operator endpoints; empty: none (unless demo)
 * @param demo           {@code auto} (demo keys when nothing else is configured and the database is
 *                       embedded), {@code true} or {@code false}
 * @param lease          how long a durable record stays held after its owner's last renewal, i.e. how soon
 *                       recovery takes over from a dead or frozen owner (renewed while the owner works)
 * @param retention      how long durable idempotency records are replayed (the charge rows stay forever)
 * @param keepAlive      renewal of the durable lease during the processor call and the other long steps
 * @param clearingShards balance rows of each tenant's processor clearing account
 * @param recovery       the recovery worker
 * @param processor      the processor client
 * @param commitBatch    the phases of concurrent charges committed together
 */
@ConfigurationProperties("exactly.payments")
public record PaymentsProperties(
        @DefaultValue("") String databaseUrl,
        @DefaultValue("") String pspUrl,
        @DefaultValue Map<String, String> apiKeys,
        @DefaultValue("") String apiKeyList,
        @DefaultValue("") String operatorKey,
        @DefaultValue("auto") String demo,
        @DefaultValue("10s") Duration lease,
        @DefaultValue("24h") Duration retention,
        @DefaultValue KeepAlive keepAlive,
        @DefaultValue("16") int clearingShards,
        @DefaultValue Recovery recovery,
        @DefaultValue Processor processor,
        @DefaultValue CommitBatch commitBatch) {

    /** The demo tenants' keys, used only in demo mode. */
    public static final Map<String, String> DEMO_KEYS = Map.of("sk_demo_acme", "acme", "sk_demo_globex", "globex");
    /** The demo operator key, used only in demo mode. */
    public static final String DEMO_OPERATOR_KEY = "sk_demo_operator";

    public PaymentsProperties {
        apiKeys = Map.copyOf(apiKeys);
        if (lease.isNegative() || lease.isZero() || retention.compareTo(lease) <= 0) {
            throw new IllegalArgumentException(
                    "exactly.payments.lease must be positive and shorter than the retention");
        }
        if (retention.compareTo(IdempotencyPolicy.MAX_RETENTION) > 0) {
            throw new IllegalArgumentException(
                    "exactly.payments.retention must be at most " + IdempotencyPolicy.MAX_RETENTION.toDays()
                            + " days (the charge rows keep every key's answer forever)");
        }
        if (keepAlive.enabled() && keepAlive.maxHold().compareTo(lease) < 0) {
            throw new IllegalArgumentException(
                    "exactly.payments.keep-alive.max-hold must be at least exactly.payments.lease");
        }
        if (clearingShards < 1 || clearingShards > 1024) {
            throw new IllegalArgumentException("exactly.payments.clearing-shards must be between 1 and 1024");
        }
        if (commitBatch.maxCharges() > 1 && commitBatch.maxCharges() * commitBatch.maxInFlight() >= clearingShards) {
            throw new IllegalArgumentException("exactly.payments.commit-batch.max-charges (" + commitBatch.maxCharges()
                    + ") times max-in-flight (" + commitBatch.maxInFlight() + ") must be below exactly.payments."
                    + "clearing-shards (" + clearingShards + "): each charge of a batch holds a shard of its clearing "
                    + "account until the batch commits, and batches that held them all would wait for each other");
        }
    }

    /**
     * Phase 1 of new charges, and phase 3 of charges, committed together: the charges that wait for a
     * transaction when one can start share it, its round trip and its commit ({@link CommitBatcher}); a
     * charge of a batch that fails takes nothing of the others with it (they run again alone).
     *
     * <p>Each charge of a phase-3 batch takes a balance row (a shard) of its tenant's clearing account and
     * keeps it until the batch commits, so {@code maxCharges × maxInFlight} must stay below
     * {@code clearing-shards}: batches never hold every shard, and a charge that finds its preferred shard
     * taken takes a free one instead of waiting.
     *
     * @param maxCharges   most charges in one transaction; 1: each charge commits alone
     * @param maxInFlight  most such transactions at once, per phase (each holds a pooled connection)
     * @param overlapAfter how long the latest transaction of a phase to start runs before another may start
     *                     beside it (zero: whenever one of {@code maxInFlight} is free)
     */
    public record CommitBatch(
            @DefaultValue("7") int maxCharges,
            @DefaultValue("2") int maxInFlight,
            @DefaultValue("10ms") Duration overlapAfter) {
        public CommitBatch {
            if (maxCharges < 1 || maxCharges > 256) {
                throw new IllegalArgumentException(
                        "exactly.payments.commit-batch.max-charges must be between 1 and 256");
            }
            if (maxInFlight < 1) {
                throw new IllegalArgumentException("exactly.payments.commit-batch.max-in-flight must be at least 1");
            }
            if (overlapAfter.isNegative() || overlapAfter.compareTo(MAX_OVERLAP_AFTER) > 0) {
                throw new IllegalArgumentException("exactly.payments.commit-batch.overlap-after must be between 0 and "
                        + MAX_OVERLAP_AFTER.toMillis() + "ms");
            }
        }

        /** The longest {@code overlap-after}: a phase whose transaction stalls must not wait long for the next. */
        public static final Duration MAX_OVERLAP_AFTER = Duration.ofSeconds(1);

        /** The batcher of one phase, or {@code null} when charges commit alone. */
        public @Nullable CommitBatcher batcher(Jdbc jdbc) {
            return maxCharges == 1 ? null : new CommitBatcher(jdbc, maxCharges, maxInFlight, overlapAfter);
        }
    }

    /** Whether the demo keys apply. */
    public boolean demoMode() {
        return switch (demo.strip().toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> databaseUrl.isBlank() && apiKeys.isEmpty() && apiKeyList.isBlank();
        };
    }

    /** Every configured API key with its tenant, the demo keys included in demo mode. */
    public Map<String, String> allApiKeys() {
        Map<String, String> all = new LinkedHashMap<>();
        if (demoMode()) {
            all.putAll(new java.util.TreeMap<>(DEMO_KEYS));
        }
        all.putAll(apiKeys);
        for (String pair : apiKeyList.split(",", -1)) {
            String p = pair.strip();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq <= 0 || eq == p.length() - 1) {
                throw new IllegalArgumentException("API_KEYS holds key=tenant pairs separated by commas");
            }
            all.put(p.substring(0, eq).strip(), p.substring(eq + 1).strip());
        }
        return all;
    }

    /** The operator key, the demo one in demo mode when none is configured; empty when there is none. */
    public String effectiveOperatorKey() {
        if (!operatorKey.isBlank()) {
            return operatorKey.strip();
        }
        return demoMode() ? DEMO_OPERATOR_KEY : "";
    }

    /**
     * Renewal of the durable lease while its owner works (the processor call, phase 3): every third of the
     * lease, owner-fenced, for at most {@code maxHold} after the claim.
     *
     * @param enabled whether the lease is renewed (off only to reproduce the old behaviour in fault runs)
     * @param maxHold the longest one owner holds a record through renewals
     */
    public record KeepAlive(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("5m") Duration maxHold) {
        public KeepAlive {
            if (maxHold.toMillis() < 1) {
                throw new IllegalArgumentException("exactly.payments.keep-alive.max-hold must be positive");
            }
        }

        /** The library's form. */
        public dev.exactly.idempotency.KeepAlive policy() {
            return enabled
                    ? dev.exactly.idempotency.KeepAlive.upTo(maxHold)
                    : dev.exactly.idempotency.KeepAlive.disabled();
        }
    }

    /**
     * The recovery worker: the atomic phases' recovery ({@code dev.exactly.idempotency.postgres.PhaseRecovery})
     * with the service's settings.
     *
     * @param enabled       whether it runs on a schedule in this instance
     * @param interval      pause between two rounds
     * @param parallelism   charges taken over per round and resumed at once (each holds a database
     *                      connection while it finishes); must stay below {@code exactly.payments.pool-size},
     *                      so requests keep connections; unset: half the pool, at most 4 ({@link #parallelism(int)})
     * @param maxAttempts   processor attempts before a charge is dead-lettered
     * @param retryDelay    ceiling of the first pause before the next attempt (doubles per attempt)
     * @param maxRetryDelay ceiling of every pause between attempts (the cap)
     * @param purgeInterval how often expired idempotency records are purged
     */
    public record Recovery(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("1s") Duration interval,
            @Nullable Integer parallelism,
            @DefaultValue("5") int maxAttempts,
            @DefaultValue("1s") Duration retryDelay,
            @DefaultValue("60s") Duration maxRetryDelay,
            @DefaultValue("10m") Duration purgeInterval) {

        /** The default parallelism's ceiling. */
        public static final int MAX_DEFAULT_PARALLELISM = 4;
        /** The most charges one worker resumes at once. */
        public static final int MAX_PARALLELISM = 256;

        public Recovery {
            if (maxAttempts < 1 || (parallelism != null && (parallelism < 1 || parallelism > MAX_PARALLELISM))) {
                throw new IllegalArgumentException("exactly.payments.recovery.max-attempts must be positive and "
                        + "exactly.payments.recovery.parallelism between 1 and " + MAX_PARALLELISM);
            }
            if (retryDelay.toMillis() < 1 || maxRetryDelay.compareTo(retryDelay) < 0) {
                throw new IllegalArgumentException("exactly.payments.recovery.retry-delay must be at least 1ms and "
                        + "exactly.payments.recovery.max-retry-delay at least the retry delay");
            }
            if (interval.toMillis() < 1 || purgeInterval.toMillis() < 1) {
                throw new IllegalArgumentException(
                        "exactly.payments.recovery.interval and .purge-interval must be " + "at least 1ms");
            }
        }

        /**
         * How many charges the worker resumes at once with a pool of {@code poolSize} connections: the
         * configured value, or half the pool (at least 1, at most {@value #MAX_DEFAULT_PARALLELISM}).
         */
        public int parallelism(int poolSize) {
            if (parallelism != null) {
                return parallelism;
            }
            return Math.max(1, Math.min(MAX_DEFAULT_PARALLELISM, poolSize / 2));
        }

        /**
         * The library's recovery policy: {@code maxAttempts} attempts, the pause after the n-th drawn
         * uniformly up to {@code min(maxRetryDelay, retryDelay × 2ⁿ⁻¹)} (full jitter, so the charges a
         * processor outage left pending are not all retried at the same moment), {@link #parallelism(int)}
         * charges at once, a round every {@code interval}.
         */
        public RecoveryPolicy policy(int poolSize) {
            return RecoveryPolicy.custom()
                    .maxAttempts(maxAttempts)
                    .firstDelay(retryDelay)
                    .maxDelay(maxRetryDelay)
                    .parallelism(parallelism(poolSize))
                    .interval(interval)
                    .build();
        }
    }

    /**
     * The processor client.
     *
     * @param connectTimeout how long connecting may take (then nothing was sent)
     * @param requestTimeout how long an answer may take (then the outcome is unknown)
     */
    public record Processor(
            @DefaultValue("2s") Duration connectTimeout,
            @DefaultValue("10s") Duration requestTimeout) {}
}
