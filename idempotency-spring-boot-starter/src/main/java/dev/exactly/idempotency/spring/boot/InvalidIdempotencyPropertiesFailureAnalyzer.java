package dev.exactly.idempotency.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains an {@link InvalidIdempotencyPropertiesException} in Spring Boot's startup failure report. */
final class InvalidIdempotencyPropertiesFailureAnalyzer
        extends AbstractFailureAnalyzer<InvalidIdempotencyPropertiesException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotencyPropertiesException cause) {
        return new FailureAnalysis(
                cause.getMessage(),
                "Fix what is listed above: each line names the exactly.idempotency.* property at fault, or the "
                        + "set-up step that is missing (every property, its type and default are documented in the "
                        + "README's properties table).",
                cause);
    }
}
