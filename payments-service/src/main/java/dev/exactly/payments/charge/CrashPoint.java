package dev.exactly.payments.charge;

import java.util.Locale;
import java.util.Optional;

/**
 * Where the test hook may make a request die (header {@code Exactly-Test-Crash}, honoured only with
 * {@code exactly.payments.test-hooks=true}). The request then stops as a crashed process would: what was
 * committed stays, what was not is rolled back, and recovery must finish the charge.
 */
public enum CrashPoint {
    /** After phase 1 committed, before the processor is called. */
    AFTER_CHARGE_CREATED,
    /** After the processor answered, before phase 3 starts. */
    AFTER_PROCESSOR_CALL,
    /** Inside phase 3, after every write, before the commit (so all of it rolls back). */
    BEFORE_FINISH;

    /** The request header naming the crash point. */
    public static final String HEADER = "Exactly-Test-Crash";

    /** The header value, e.g. {@code after-charge-created}. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Optional<CrashPoint> parse(String wire) {
        for (CrashPoint p : values()) {
            if (p.wire().equals(wire.strip().toLowerCase(Locale.ROOT))) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Dies here if {@code requested} names this point. */
    void reachedBy(@org.jspecify.annotations.Nullable CrashPoint requested) {
        if (requested == this) {
            throw new InjectedCrash(this);
        }
    }

    /** The injected death of a request: an {@link Error}, so nothing on the way catches it as a failure to handle. */
    public static final class InjectedCrash extends Error {
        public InjectedCrash(CrashPoint point) {
            super("test hook: crash " + point.wire(), null, false, false);
        }
    }
}
