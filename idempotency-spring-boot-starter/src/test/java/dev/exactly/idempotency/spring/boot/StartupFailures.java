package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;

/** What a context that must not have started reports. */
final class StartupFailures {
    private StartupFailures() {}

    /** The problems of the {@link InvalidIdempotencyPropertiesException} that stopped {@code context}. */
    static List<String> problems(AssertableWebApplicationContext context) {
        assertThat(context).hasFailed();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            if (t instanceof InvalidIdempotencyPropertiesException invalid) {
                return invalid.problems();
            }
        }
        throw new AssertionError("not an invalid configuration", context.getStartupFailure());
    }
}
