package dev.exactly.testing;

/** Whether tests run under CI, where every required service must be present. */
public final class Ci {
    private Ci() {}

    public static boolean strict() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Fails under CI; otherwise returns so that the caller can start an embedded replacement. */
    public static void requireOrFallback(String service, String where, Exception cause) {
        if (strict()) {
            throw new IllegalStateException(
                    service + " is required at " + where + " when CI=true, and it is not reachable: " + cause, cause);
        }
        System.err.println("[exactly-tests] " + service + " not reachable at " + where + " (" + cause
                + "); starting an embedded one");
    }
}
