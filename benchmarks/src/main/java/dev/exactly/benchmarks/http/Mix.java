package dev.exactly.benchmarks.http;

/**
 * What the clients send: each request a fresh key, or a share of replays of keys completed beforehand
 * (the rest fresh).
 *
 * @param name        how the table names it
 * @param replayShare the share of requests that repeat a completed key, 0 to 1
 */
public record Mix(String name, double replayShare) {

    public Mix {
        if (!(replayShare >= 0 && replayShare <= 1)) {
            throw new IllegalArgumentException("replayShare must be between 0 and 1");
        }
    }

    /** Every request a fresh key. */
    public static Mix fresh() {
        return new Mix("fresh keys", 0);
    }

    /** {@code share} of the requests replay a completed key. */
    public static Mix replays(double share) {
        return new Mix(Math.round(share * 100) + "% replays", share);
    }
}
