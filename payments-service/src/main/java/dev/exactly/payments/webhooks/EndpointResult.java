package dev.exactly.payments.webhooks;

import dev.exactly.payments.json.FieldError;
import java.util.List;

/** What creating a webhook endpoint came to. */
public sealed interface EndpointResult {

    /**
     * Created: the only time the secret is shown.
     *
     * @param endpoint the new endpoint
     * @param secret   its signing secret ({@code whsec_…})
     */
    record Created(Endpoint endpoint, String secret) implements EndpointResult {}

    /** The tenant has as many enabled endpoints as it may have; nothing was created. */
    record LimitReached(int limit) implements EndpointResult {}

    /** The body broke its rules; nothing was created. */
    record Invalid(List<FieldError> errors) implements EndpointResult {
        public Invalid {
            errors = List.copyOf(errors);
        }
    }
}
