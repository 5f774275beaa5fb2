package dev.exactly.idempotency.spring.boot;

import java.util.List;

/**
 * The {@code exactly.idempotency.*} properties are invalid; thrown at startup, so that the application
 * does not start rather than fail its first request. {@link #problems()} names each property at fault.
 */
public final class InvalidIdempotencyPropertiesException extends IllegalStateException {
    private final List<String> problems;

    public InvalidIdempotencyPropertiesException(List<String> problems) {
        super(message(problems));
        this.problems = List.copyOf(problems);
    }

    /** One line per problem, each starting with the property it concerns. */
    public List<String> problems() {
        return problems;
    }

    private static String message(List<String> problems) {
        StringBuilder message = new StringBuilder("Invalid exactly.idempotency configuration:");
        for (String problem : problems) {
            message.append("\n - ").append(problem);
        }
        return message.toString();
    }
}
