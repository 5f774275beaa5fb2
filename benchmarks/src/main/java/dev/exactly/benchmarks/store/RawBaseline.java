package dev.exactly.benchmarks.store;

/**
 * One set-if-absent round trip on the store's server with the same client stack the store uses: the
 * physical limit a guarded operation is compared against.
 */
public interface RawBaseline extends AutoCloseable {

    /** What one operation sends, e.g. {@code SET key value NX PX 30000}. */
    String operation();

    /**
     * Writes {@code key} if it is absent.
     *
     * @return whether it was written (false: the key existed)
     */
    boolean insertIfAbsent(String key);

    @Override
    void close();
}
