package dev.exactly.idempotency.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Guards a controller method (Spring MVC or WebFlux) with an idempotency key, as a route of
 * {@code exactly.idempotency.routes} would: the starter finds every such method at startup in the handler
 * mappings, and guards each of its HTTP methods and path patterns. On a controller class it guards every
 * handler method of the class mapped to a method that changes something (POST, PUT, PATCH, DELETE; reads such
 * as GET stay unguarded); an annotation on the method replaces the class's (the two are not merged), and
 * guards whatever the method is mapped to. A class-level handler method mapped to no HTTP method at all is
 * refused like a method-level one.
 *
 * <pre>{@code
 * @PostMapping("/v1/charges")
 * @Idempotent(lease = "10s", retention = "24h", inFlight = Idempotent.InFlight.WAIT, maxWait = "5s")
 * public Charge charge(@RequestBody ChargeRequest request) { ... }
 * }</pre>
 *
 * <p>Every setting left empty takes the top-level property ({@code exactly.idempotency.lease},
 * {@code .retention}, {@code .in-flight.*}, {@code .keep-alive.*}). Durations are written as in properties
 * ({@code 500ms}, {@code 10s}, {@code 24h}) and may be {@code ${...}} placeholders. The mapping must name its
 * HTTP methods ({@code @PostMapping}, not a bare {@code @RequestMapping}) and its path patterns must be made
 * of literal and {@code {variable}} segments (a {@code {id:regex}} variable counts as {@code {id}}; wildcards
 * cannot be guarded). A route guarded both here and in {@code exactly.idempotency.routes} (or by an
 * {@code IdempotentRoute} bean) stops the startup with both named. Any mistake stops the startup, never the
 * first request.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Idempotent {

    /** Whether a request without a key is refused with 400 (the default), or passes through unguarded. */
    boolean keyRequired() default true;

    /** The lease (how soon a retry may take over from a dead or stalled request); empty: the top-level lease. */
    String lease() default "";

    /** How long the outcome is replayed; empty: the top-level retention. */
    String retention() default "";

    /** What a request does when its key is in flight; {@link InFlight#DEFAULT}: the top-level policy. */
    InFlight inFlight() default InFlight.DEFAULT;

    /** {@code Retry-After} of the 409 under {@link InFlight#REJECT}; empty: the top-level setting. */
    String retryAfter() default "";

    /** The bound of the wait under {@link InFlight#WAIT} (at most 60s); empty: the top-level setting. */
    String maxWait() default "";

    /** Whether a 5xx answer is recorded and replayed (Stripe's behaviour) instead of releasing the key. */
    boolean recordServerErrors() default false;

    /** The in-flight behaviour of a route. */
    enum InFlight {
        /** The top-level {@code exactly.idempotency.in-flight.policy}. */
        DEFAULT,
        /** Answer 409 with {@code Retry-After} at once. */
        REJECT,
        /** Wait (bounded) for the request in flight, then replay its response. */
        WAIT
    }
}
