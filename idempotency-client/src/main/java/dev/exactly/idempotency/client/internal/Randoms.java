package dev.exactly.idempotency.client.internal;

import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/** Random sources. */
public final class Randoms {
    private static final RandomGenerator THREAD_LOCAL =
            () -> ThreadLocalRandom.current().nextLong();

    private Randoms() {}

    /**
     * A generator that any thread may use: each call draws from the calling thread's
     * {@link ThreadLocalRandom} (the shared instance must not be kept and used by other threads).
     */
    public static RandomGenerator threadLocal() {
        return THREAD_LOCAL;
    }
}
