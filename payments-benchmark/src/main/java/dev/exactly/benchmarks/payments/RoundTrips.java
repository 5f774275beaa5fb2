package dev.exactly.benchmarks.payments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * The service JVM's socket writes over the measured phase, by peer: PostgreSQL, Redis and the processor
 * stand-in. Read from a flight recording of {@code jdk.SocketWrite} alone (no threshold, no stack traces,
 * a throttle far above any rate reached: recordings running at once share one throttle per event, the
 * highest rate among them, and "off" would lose to the 100/s of a profile recording started alongside).
 * pgjdbc flushes once per round trip, so the writes to PostgreSQL count its round trips (a batched commit's
 * carries several charges); the Redis store's client sends the commands of concurrent requests that wait
 * for its event loop at the same time in one write, so the writes to Redis are at most its commands, fewer
 * the busier the service; the JDK HTTP client writes a request's head and body apart (two per processor
 * call). The writes to PostgreSQL and the processor do not depend on the machine's load.
 *
 * @param postgres  writes to the database's port
 * @param redis     writes to the hot tier's port
 * @param processor writes to the processor stand-in's port
 */
record RoundTrips(long postgres, long redis, long processor) {

    /** The recording's settings: {@code jdk.SocketWrite}, every write (a million a second is no limit here). */
    private static final String SETTINGS = """
            <?xml version="1.0" encoding="UTF-8"?>
            <configuration version="2.0" label="socket writes">
              <event name="jdk.SocketWrite">
                <setting name="enabled">true</setting>
                <setting name="stackTrace">false</setting>
                <setting name="threshold">0 ms</setting>
                <setting name="throttle">1000000/s</setting>
              </event>
            </configuration>
            """;

    /** Writes the recording's settings file into {@code dir}; its path, for {@code JFR.start settings=}. */
    static Path settingsFile(Path dir) throws IOException {
        return Files.writeString(dir.resolve("socket-writes.jfc"), SETTINGS);
    }

    /** Counts the writes of a recording made with {@link #settingsFile} by peer port. */
    static RoundTrips read(Path recording, int postgresPort, int redisPort, int processorPort) throws IOException {
        long postgres = 0;
        long redis = 0;
        long processor = 0;
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                RecordedEvent event = file.readEvent();
                if (!event.getEventType().getName().equals("jdk.SocketWrite")) {
                    continue;
                }
                int port = event.getInt("port");
                if (port == postgresPort) {
                    postgres++;
                } else if (port == redisPort) {
                    redis++;
                } else if (port == processorPort) {
                    processor++;
                }
            }
        }
        return new RoundTrips(postgres, redis, processor);
    }

    /** The counts per charge, as one report line. */
    String perCharge(long charges) {
        double n = Math.max(1, charges);
        return String.format("PostgreSQL %.2f, Redis %.2f, processor %.2f", postgres / n, redis / n, processor / n);
    }
}
