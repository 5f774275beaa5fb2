package dev.exactly.idempotency.spring.boot.metrics;

import dev.exactly.idempotency.IdempotencyListener;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.RecordStatus;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoreUnavailableException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Records the engine's events as Micrometer meters named {@code exactly.idempotency.*}. Every meter is
 * tagged with {@code route} (the path template) and {@code method}, never with the key or the tenant,
 * so the number of series is bounded by the number of routes.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>extra tags</th><th>what</th></tr>
 *   <tr><td>{@value #CLAIMS}</td><td>counter</td><td>takeover=true|false</td><td>keys claimed (the handler ran);
 *       takeover when an expired lease was taken over</td></tr>
 *   <tr><td>{@value #REPLAYS}</td><td>counter</td><td>outcome=completed|failed</td><td>recorded responses replayed</td></tr>
 *   <tr><td>{@value #MISMATCHES}</td><td>counter</td><td></td><td>keys reused with a different request (422)</td></tr>
 *   <tr><td>{@value #CONFLICTS}</td><td>counter</td><td>waited=true|false</td><td>requests refused because their
 *       key was in flight (409), after a bounded wait or at once</td></tr>
 *   <tr><td>{@value #WAITS}</td><td>timer</td><td>result=replayed|claimed|timed_out</td><td>coalesced requests and
 *       how long they waited for the request in flight</td></tr>
 *   <tr><td>{@value #LOCK_FAILURE_RATIO}</td><td>gauge</td><td></td><td>conflicts / (claims + conflicts) since
 *       start; for a windowed rate use the two counters</td></tr>
 *   <tr><td>{@value #LEASE_HOLD}</td><td>timer (p50, p95, p99, histogram)</td><td>outcome=completed|failed|released|lost</td>
 *       <td>how long the handler held the key, from claim to record/release</td></tr>
 *   <tr><td>{@value #LEASE_LOST}</td><td>counter</td><td></td><td>owners that lost their lease before recording</td></tr>
 *   <tr><td>{@value #RENEWALS}</td><td>counter</td><td></td><td>lease renewals the store confirmed (keep-alive and
 *       the handler's own)</td></tr>
 *   <tr><td>{@value #RENEWAL_FAILURES}</td><td>counter</td><td>reason=lost|store_error</td><td>renewals that failed:
 *       refused because another request took the key over, or unanswered by the store (then retried)</td></tr>
 *   <tr><td>{@value #MAX_HOLD}</td><td>counter</td><td></td><td>keep-alives that stopped at their max hold</td></tr>
 *   <tr><td>{@value #STORE_ERRORS}</td><td>counter</td><td>exception=simple class name</td><td>store failures
 *       (before the action: the request failed closed with 503; after it: the write is repaired)</td></tr>
 *   <tr><td>{@value #REPAIRS}</td><td>counter</td><td>repair=undo_claim|record|release,
 *       result=scheduled|applied|not_needed|abandoned</td><td>writes whose answer the store did not give,
 *       finished in the background with the owner token</td></tr>
 * </table>
 *
 * <p>Thread-safe; the meters of a route are registered on its first event and then reused.
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener {
    /** Counter of claims. */
    public static final String CLAIMS = "exactly.idempotency.claims";
    /** Counter of replays. */
    public static final String REPLAYS = "exactly.idempotency.replays";
    /** Counter of fingerprint mismatches. */
    public static final String MISMATCHES = "exactly.idempotency.mismatches";
    /** Counter of in-flight conflicts answered with 409. */
    public static final String CONFLICTS = "exactly.idempotency.conflicts";
    /** Timer of coalesced waits. */
    public static final String WAITS = "exactly.idempotency.waits";
    /** Gauge: conflicts / (claims + conflicts). */
    public static final String LOCK_FAILURE_RATIO = "exactly.idempotency.lock.failure.ratio";
    /** Timer of lease hold times. */
    public static final String LEASE_HOLD = "exactly.idempotency.lease.hold";
    /** Counter of lost leases. */
    public static final String LEASE_LOST = "exactly.idempotency.lease.lost";
    /** Counter of confirmed lease renewals. */
    public static final String RENEWALS = "exactly.idempotency.lease.renewals";
    /** Counter of failed lease renewals, by reason. */
    public static final String RENEWAL_FAILURES = "exactly.idempotency.lease.renewal.failures";
    /** Counter of keep-alives that stopped at their max hold. */
    public static final String MAX_HOLD = "exactly.idempotency.lease.max.hold";
    /** Counter of store errors. */
    public static final String STORE_ERRORS = "exactly.idempotency.store.errors";
    /** Counter: background repairs of unanswered store writes. */
    public static final String REPAIRS = "exactly.idempotency.repairs";

    private static final Duration MIN_EXPECTED = Duration.ofMillis(1);
    private static final Duration MAX_EXPECTED = Duration.ofMinutes(5);

    private final MeterRegistry registry;
    private final ConcurrentMap<RouteId, RouteMeters> routes = new ConcurrentHashMap<>();

    public MicrometerIdempotencyListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    private record RouteId(String route, String method) {}

    /** The meters of one route and method. */
    private static final class RouteMeters {
        final Counter claims;
        final Counter takeovers;
        final Counter replaysCompleted;
        final Counter replaysFailed;
        final Counter mismatches;
        final Counter conflicts;
        final Counter conflictsAfterWait;
        final Timer waitReplayed;
        final Timer waitClaimed;
        final Timer waitTimedOut;
        final Timer holdCompleted;
        final Timer holdFailed;
        final Timer holdReleased;
        final Timer holdLost;
        final Counter leaseLost;
        final Counter renewals;
        final Counter renewalsLost;
        final Counter renewalsUnanswered;
        final Counter maxHold;
        final Tags tags;

        RouteMeters(MeterRegistry registry, Tags tags) {
            this.tags = tags;
            claims = counter(registry, CLAIMS, "keys claimed: the handler ran", tags.and("takeover", "false"));
            takeovers = counter(registry, CLAIMS, "keys claimed: the handler ran", tags.and("takeover", "true"));
            replaysCompleted =
                    counter(registry, REPLAYS, "recorded responses replayed", tags.and("outcome", "completed"));
            replaysFailed = counter(registry, REPLAYS, "recorded responses replayed", tags.and("outcome", "failed"));
            mismatches = counter(registry, MISMATCHES, "keys reused with a different request (422)", tags);
            conflicts = counter(
                    registry, CONFLICTS, "requests refused with 409: key in flight", tags.and("waited", "false"));
            conflictsAfterWait = counter(
                    registry, CONFLICTS, "requests refused with 409: key in flight", tags.and("waited", "true"));
            waitReplayed = waitTimer(registry, tags.and("result", "replayed"));
            waitClaimed = waitTimer(registry, tags.and("result", "claimed"));
            waitTimedOut = waitTimer(registry, tags.and("result", "timed_out"));
            holdCompleted = holdTimer(registry, tags.and("outcome", "completed"));
            holdFailed = holdTimer(registry, tags.and("outcome", "failed"));
            holdReleased = holdTimer(registry, tags.and("outcome", "released"));
            holdLost = holdTimer(registry, tags.and("outcome", "lost"));
            leaseLost = counter(registry, LEASE_LOST, "owners that lost their lease before recording", tags);
            renewals = counter(registry, RENEWALS, "lease renewals the store confirmed", tags);
            renewalsLost =
                    counter(registry, RENEWAL_FAILURES, "lease renewals that failed", tags.and("reason", "lost"));
            renewalsUnanswered = counter(
                    registry, RENEWAL_FAILURES, "lease renewals that failed", tags.and("reason", "store_error"));
            maxHold = counter(registry, MAX_HOLD, "keep-alives that stopped at their max hold", tags);
            Gauge.builder(LOCK_FAILURE_RATIO, this, RouteMeters::lockFailureRatio)
                    .description("conflicts / (claims + conflicts) since start")
                    .tags(tags)
                    .register(registry);
        }

        double lockFailureRatio() {
            double failed = conflicts.count() + conflictsAfterWait.count();
            double attempts = claims.count() + takeovers.count() + failed;
            return attempts == 0 ? 0 : failed / attempts;
        }

        private static Counter counter(MeterRegistry registry, String name, String description, Tags tags) {
            return Counter.builder(name).description(description).tags(tags).register(registry);
        }

        private static Timer waitTimer(MeterRegistry registry, Tags tags) {
            return Timer.builder(WAITS)
                    .description("requests that waited for the same key in flight, and for how long")
                    .tags(tags)
                    .publishPercentiles(0.5, 0.95, 0.99)
                    .minimumExpectedValue(MIN_EXPECTED)
                    .maximumExpectedValue(Duration.ofSeconds(60))
                    .register(registry);
        }

        private static Timer holdTimer(MeterRegistry registry, Tags tags) {
            return Timer.builder(LEASE_HOLD)
                    .description("how long a request held its key, from claim to record or release")
                    .tags(tags)
                    .publishPercentiles(0.5, 0.95, 0.99)
                    .publishPercentileHistogram()
                    .minimumExpectedValue(MIN_EXPECTED)
                    .maximumExpectedValue(MAX_EXPECTED)
                    .register(registry);
        }
    }

    private RouteMeters meters(IdempotencyRequest request) {
        Scope scope = request.scope();
        return routes.computeIfAbsent(
                new RouteId(scope.route(), scope.method()),
                id -> new RouteMeters(registry, Tags.of("route", id.route(), "method", id.method())));
    }

    @Override
    public void onClaim(IdempotencyRequest request, boolean takeover) {
        RouteMeters meters = meters(request);
        (takeover ? meters.takeovers : meters.claims).increment();
    }

    @Override
    public void onReplay(IdempotencyRequest request, IdempotencyRecord record) {
        RouteMeters meters = meters(request);
        (record.status() == RecordStatus.FAILED ? meters.replaysFailed : meters.replaysCompleted).increment();
    }

    @Override
    public void onMismatch(IdempotencyRequest request, IdempotencyRecord record) {
        meters(request).mismatches.increment();
    }

    @Override
    public void onConflict(IdempotencyRequest request, boolean waited) {
        RouteMeters meters = meters(request);
        (waited ? meters.conflictsAfterWait : meters.conflicts).increment();
    }

    @Override
    public void onWait(IdempotencyRequest request, Duration waited, WaitResult result) {
        RouteMeters meters = meters(request);
        Timer timer = switch (result) {
            case REPLAYED -> meters.waitReplayed;
            case CLAIMED -> meters.waitClaimed;
            case TIMED_OUT -> meters.waitTimedOut;
        };
        timer.record(waited);
    }

    @Override
    public void onRecorded(IdempotencyRequest request, RecordStatus status, Duration held) {
        RouteMeters meters = meters(request);
        (status == RecordStatus.FAILED ? meters.holdFailed : meters.holdCompleted).record(held);
    }

    @Override
    public void onReleased(IdempotencyRequest request, Duration held) {
        meters(request).holdReleased.record(held);
    }

    @Override
    public void onLeaseLost(IdempotencyRequest request, Duration held) {
        RouteMeters meters = meters(request);
        meters.leaseLost.increment();
        meters.holdLost.record(held);
    }

    @Override
    public void onRenewal(IdempotencyRequest request, RenewalResult result) {
        RouteMeters meters = meters(request);
        Counter counter = switch (result) {
            case RENEWED -> meters.renewals;
            case LOST -> meters.renewalsLost;
            case FAILED -> meters.renewalsUnanswered;
            case MAX_HOLD -> meters.maxHold;
        };
        counter.increment();
    }

    @Override
    public void onStoreError(IdempotencyRequest request, Throwable error) {
        Counter.builder(STORE_ERRORS)
                .description("idempotency store failures; the request failed closed (503)")
                .tags(meters(request).tags)
                .tag("exception", exceptionType(error))
                .register(registry)
                .increment();
    }

    @Override
    public void onRepair(IdempotencyRequest request, Repair repair, RepairResult result) {
        Counter.builder(REPAIRS)
                .description("store writes whose answer was lost, finished in the background with the owner token")
                .tags(meters(request).tags)
                .tag("repair", repair.name().toLowerCase(java.util.Locale.ROOT))
                .tag("result", result.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry)
                .increment();
    }

    /** The failure's own class, or for the engine's wrapper the class of what it wraps. */
    static String exceptionType(Throwable error) {
        Throwable cause = error.getCause();
        Throwable named = error instanceof StoreUnavailableException && cause != null ? cause : error;
        String name = named.getClass().getSimpleName();
        return name.isEmpty() ? named.getClass().getName() : name;
    }

    @Override
    public String toString() {
        return "MicrometerIdempotencyListener[" + routes.size() + " routes]";
    }
}
