package dev.exactly.benchmarks.http;

import java.util.List;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * What one timed phase measured: one endpoint, one mix, one round.
 *
 * @param variant      the endpoint
 * @param mix          what was sent
 * @param round        the round (0 for warm-up and preparation)
 * @param responses    answers received
 * @param errors       answers rejected by the checks, socket errors and timeouts, and accounting errors
 *                     (executions that do not match the answers)
 * @param seconds      the phase's duration
 * @param p50Millis    median latency
 * @param p99Millis    99th percentile latency
 * @param executions   handler executions during the phase
 * @param redis        what the Redis server did during the phase, for endpoints on Redis
 * @param serverCpuNanos CPU time the server's JVM (Tomcat, the guard, the store's client) used during the phase
 * @param postgresCpuMicros CPU time of the local PostgreSQL server's processes during the phase, for endpoints
 *                     on PostgreSQL where {@code /proc} shows them
 * @param errorSamples the first few errors
 */
public record PhaseResult(
        Variant variant,
        Mix mix,
        int round,
        long responses,
        long errors,
        double seconds,
        double p50Millis,
        double p99Millis,
        long executions,
        RedisCommandStats.@Nullable Delta redis,
        long serverCpuNanos,
        OptionalLong postgresCpuMicros,
        List<String> errorSamples) {

    public PhaseResult {
        errorSamples = List.copyOf(errorSamples);
    }

    /** Answers per second. */
    public double rate() {
        return seconds == 0 ? 0 : responses / seconds;
    }
}
