package dev.exactly.benchmarks.store;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The physical floor of a guarded operation on the store's server, through the same client stack and
 * pool the store uses: a fresh key costs two raw round trips, {@link #claim} (write a placeholder if the
 * key is absent) and then {@link #finish} (replace it with the response); a replay costs one,
 * {@link #read}. No correct guard can do with less: it must claim before the action runs and record
 * the outcome after it, and a replay must read the recorded outcome.
 */
public interface RawBaseline extends AutoCloseable {

    /**
     * How long a baseline keeps what it writes where its server expires keys (Redis): as long as the HTTP
     * benchmark's guarded route keeps its records, since replay keys are read long after they were written.
     */
    Duration KEPT = Duration.ofHours(1);

    /** What a fresh key sends, e.g. {@code SET k v NX PX 3600000, then SET k v XX PX 3600000}. */
    String freshOperations();

    /** What a replay sends, e.g. {@code GET k}. */
    String replayOperation();

    /**
     * The first round trip of a fresh key: writes a placeholder if {@code key} is absent.
     *
     * @return whether it was written (false: the key existed)
     */
    boolean claim(String key);

    /**
     * The second round trip: stores {@code value} under a key {@link #claim} wrote.
     *
     * @return whether the key was there to update
     */
    boolean finish(String key, byte[] value);

    /** The replay's one round trip: the value {@link #finish} stored, or null. */
    byte @Nullable [] read(String key);

    @Override
    void close();
}
