package dev.exactly.payments.config;

import dev.exactly.payments.webhooks.DeliveryWorker;
import dev.exactly.payments.webhooks.RetrySchedule;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the webhook delivery worker ({@code exactly.payments.webhooks.*}), checked at startup: a
 * bad value stops the service naming the property.
 *
 * @param enabled        whether the worker sends deliveries in this instance (every instance may)
 * @param interval       pause between two sweeps
 * @param batchSize      deliveries claimed at once
 * @param parallelism    deliveries sent at once
 * @param perEndpointParallelism deliveries of one endpoint sent at once, at most {@code parallelism}: an
 *                       endpoint that answers slowly, or a tenant's flood of events, holds no more of the
 *                       worker's attempts than this
 * @param maxAttempts    attempts before a delivery is dead-lettered
 * @param retryDelay     ceiling of the first pause between attempts (doubling per attempt)
 * @param maxRetryDelay  ceiling of every pause
 * @param connectTimeout bound of connecting to an endpoint
 * @param requestTimeout bound of one attempt's answer
 * @param lease          how long a claimed delivery is hidden from other workers: longer than
 *                       {@code connect-timeout + request-timeout}; after a worker died mid-delivery, the
 *                       event is sent again once it ends
 */
@ConfigurationProperties("exactly.payments.webhooks")
public record WebhookProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("1s") Duration interval,
        @DefaultValue("20") int batchSize,
        @DefaultValue("16") int parallelism,
        @DefaultValue("2") int perEndpointParallelism,
        @DefaultValue("12") int maxAttempts,
        @DefaultValue("10s") Duration retryDelay,
        @DefaultValue("1h") Duration maxRetryDelay,
        @DefaultValue("2s") Duration connectTimeout,
        @DefaultValue("10s") Duration requestTimeout,
        @DefaultValue("30s") Duration lease,
        @DefaultValue("false") boolean allowPrivateNetworks) {

    public WebhookProperties {
        if (batchSize < 1 || batchSize > 1000) {
            throw new IllegalArgumentException("exactly.payments.webhooks.batch-size must be between 1 and 1000");
        }
        if (parallelism < 1 || parallelism > 256) {
            throw new IllegalArgumentException("exactly.payments.webhooks.parallelism must be between 1 and 256");
        }
        if (perEndpointParallelism < 1 || perEndpointParallelism > parallelism) {
            throw new IllegalArgumentException(
                    "exactly.payments.webhooks.per-endpoint-parallelism must be between 1 and "
                            + "exactly.payments.webhooks.parallelism (" + parallelism + ")");
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new IllegalArgumentException("exactly.payments.webhooks.max-attempts must be between 1 and 100");
        }
        if (interval.toMillis() < 1) {
            throw new IllegalArgumentException("exactly.payments.webhooks.interval must be positive");
        }
        if (retryDelay.toMillis() < 1 || maxRetryDelay.compareTo(retryDelay) < 0) {
            throw new IllegalArgumentException("exactly.payments.webhooks.retry-delay must be positive and at most "
                    + "exactly.payments.webhooks.max-retry-delay");
        }
        if (connectTimeout.toMillis() < 1 || requestTimeout.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "exactly.payments.webhooks.connect-timeout and request-timeout must be positive");
        }
        if (lease.compareTo(connectTimeout.plus(requestTimeout)) <= 0) {
            throw new IllegalArgumentException(
                    "exactly.payments.webhooks.lease must be longer than connect-timeout plus "
                            + "request-timeout (a live worker must record its answer before another may send the event again)");
        }
    }

    /** The worker's settings; in demo mode private networks are allowed (a receiver on the same machine). */
    public DeliveryWorker.Settings settings(boolean demoMode) {
        return new DeliveryWorker.Settings(
                enabled,
                interval,
                batchSize,
                parallelism,
                perEndpointParallelism,
                lease,
                new RetrySchedule(maxAttempts, retryDelay, maxRetryDelay),
                connectTimeout,
                requestTimeout,
                allowPrivateNetworks || demoMode);
    }
}
