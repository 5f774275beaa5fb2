package dev.exactly.payments.json;

import java.util.List;

/**
 * A request body read into a value, or the reasons it could not be.
 *
 * @param <T> the value
 */
public sealed interface Parsed<T> {

    /** The body was valid. */
    record Valid<T>(T value) implements Parsed<T> {}

    /** The body broke its rules: nothing ran; the client may fix it and retry with the same key. */
    record Invalid<T>(List<FieldError> errors) implements Parsed<T> {
        public Invalid {
            if (errors.isEmpty()) {
                throw new IllegalArgumentException("an invalid body has at least one error");
            }
            errors = List.copyOf(errors);
        }
    }
}
