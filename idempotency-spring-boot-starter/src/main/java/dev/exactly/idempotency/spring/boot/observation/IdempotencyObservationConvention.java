package dev.exactly.idempotency.spring.boot.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@code exactly.idempotency} observation. The default: low-cardinality tags
 * {@code route} (the path template), {@code method} and, once it ended, {@code outcome}; nothing of the
 * key or the tenant. Define a bean of this type to change them.
 */
public interface IdempotencyObservationConvention extends ObservationConvention<IdempotencyObservationContext> {

    /** The observation's (and the timer's) name. */
    String NAME = "exactly.idempotency";

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof IdempotencyObservationContext;
    }

    /** The default convention. */
    IdempotencyObservationConvention DEFAULT = new IdempotencyObservationConvention() {
        @Override
        public String getName() {
            return NAME;
        }

        @Override
        public String getContextualName(IdempotencyObservationContext context) {
            return "idempotency " + context.request().scope().method() + " "
                    + context.request().scope().route();
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
            KeyValues tags = KeyValues.of(
                    "route",
                    context.request().scope().route(),
                    "method",
                    context.request().scope().method());
            String outcome = context.outcome();
            return outcome == null ? tags : tags.and("outcome", outcome);
        }
    };
}
