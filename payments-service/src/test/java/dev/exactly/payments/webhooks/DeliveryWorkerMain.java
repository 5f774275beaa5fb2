package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A delivery worker in a process of its own, for the crash test: sweeps every 50 ms (lease 6 s, connect
 * 1 s, answer 4 s) until it is killed, or for two minutes at most. Prints {@code ready} once it runs.
 *
 * <pre>java -cp … dev.exactly.payments.webhooks.DeliveryWorkerMain jdbc:postgresql://… schema</pre>
 */
public final class DeliveryWorkerMain {
    static final Duration LEASE = Duration.ofSeconds(6);

    private DeliveryWorkerMain() {}

    public static void main(String[] args) throws InterruptedException {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(args[0]);
        dataSource.setCurrentSchema(args[1]);
        DeliveryWorker worker = new DeliveryWorker(
                new Jdbc(dataSource),
                new DeliveryWorker.Settings(
                        true,
                        Duration.ofMillis(50),
                        10,
                        2,
                        2,
                        LEASE,
                        new RetrySchedule(5, Duration.ofMillis(200), Duration.ofSeconds(2)),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(4),
                        true),
                InstantSource.system(),
                RandomGenerator.getDefault());
        worker.start();
        System.out.println("ready");
        System.out.flush();
        new CountDownLatch(1).await(2, TimeUnit.MINUTES);
        worker.stop();
    }
}
