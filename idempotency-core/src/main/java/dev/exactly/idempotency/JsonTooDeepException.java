package dev.exactly.idempotency;

/**
 * A JSON request body nests arrays and objects deeper than the fingerprinter's limit. Refused before any
 * parser sees it: the depth is counted by one linear scan, so no input can exhaust a thread's stack.
 */
public final class JsonTooDeepException extends IdempotencyException {
    private final int maxDepth;

    public JsonTooDeepException(int maxDepth) {
        super("json_too_deep", "the JSON request body nests deeper than " + maxDepth + " levels", null);
        this.maxDepth = maxDepth;
    }

    /** The deepest nesting accepted. */
    public int maxDepth() {
        return maxDepth;
    }
}
