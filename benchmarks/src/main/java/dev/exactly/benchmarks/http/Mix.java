package dev.exactly.benchmarks.http;

/** What the clients send in one phase. */
public enum Mix {
    /** Every request a key never sent before: a claim, the handler and a completion. */
    FRESH("fresh keys", "fresh"),
    /** Every request one of the keys completed before the phases: a replay of its first answer. */
    REPLAYS("replays", "replay"),
    /**
     * Nine requests in ten a fresh key, the tenth a replay, as retries come among first attempts: a guard
     * cannot tell them apart before asking its store, while the raw floor is told (an oracle): the least two
     * round trips for a fresh key and one for a replay cost together.
     */
    MIXED("mixed 9:1", "mixed");

    private final String title;
    private final String mode;

    Mix(String title, String mode) {
        this.title = title;
        this.mode = mode;
    }

    /** How the report names it. */
    public String title() {
        return title;
    }

    /** The load script's mode argument. */
    String mode() {
        return mode;
    }

    /** The mix named {@code name} in {@code -Dexactly.bench.mixes}: {@code fresh}, {@code replays} or {@code mixed}. */
    static Mix of(String name) {
        return switch (name) {
            case "fresh" -> FRESH;
            case "replays" -> REPLAYS;
            case "mixed" -> MIXED;
            default -> throw new IllegalArgumentException("unknown mix " + name + " (fresh, replays, mixed)");
        };
    }
}
