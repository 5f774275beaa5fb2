package dev.exactly.idempotency;

/**
 * Wraps each guarded execution of the engine ({@link IdempotencyEngine#execute}): a tracing span, a
 * Micrometer {@code Observation}, a logging context. The engine calls it on the caller's thread around the
 * whole execution (the claim, any wait, the action and the recording or release), so that whatever the
 * interceptor makes current there (a span scope, say) is current for the action too; the
 * {@link IdempotencyListener} events of the execution happen inside it.
 *
 * <p>An interceptor must call {@link Execution#proceed()} exactly once and return its result, or let what
 * it threw propagate unchanged: the engine's answer (an {@link IdempotencyException}, the action's own
 * exception) is the caller's protocol. It must not throw on its own account.
 */
@FunctionalInterface
public interface ExecutionInterceptor {

    /** Runs the execution as it is. */
    ExecutionInterceptor NONE = (request, execution) -> execution.proceed();

    /**
     * Runs {@code execution} for {@code request}.
     *
     * @return what {@code execution.proceed()} returned
     */
    IdempotentResult intercept(IdempotencyRequest request, Execution execution) throws Exception;

    /** The guarded execution, to be run once. */
    @FunctionalInterface
    interface Execution {
        IdempotentResult proceed() throws Exception;
    }
}
