package dev.exactly.benchmarks.http;

/** What the clients send in one phase. */
public enum Mix {
    /** Every request a key never sent before: a claim, the handler and a completion. */
    FRESH("fresh keys", "fresh"),
    /** Every request one of the keys completed before the phases: a replay of its first answer. */
    REPLAYS("replays", "replay");

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
}
