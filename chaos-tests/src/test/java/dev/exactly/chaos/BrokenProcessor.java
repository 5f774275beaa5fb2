package dev.exactly.chaos;

import dev.exactly.psp.FaultSettings;
import dev.exactly.psp.PspConfig;
import java.time.Duration;

/**
 * The deliberately broken mode the checker must catch: a processor that ignores idempotency keys (every
 * call captures; the simulator's {@code honourIdempotencyKeys(false)}, which the jar has no switch for,
 * so it runs in this JVM) behind one service instance whose processor calls are slower than its lease,
 * with the keep-alive off (as before leases were renewed; with it, the slow call would keep its record).
 * The lease runs out while the first call is in flight, recovery (the worker, or a client's retry)
 * takes the record over, asks the processor, finds nothing yet, and sends the same request with the same
 * downstream key again: an honest processor answers it from its idempotency record, the broken one
 * captures a second time. The service itself records one charge and one journal entry, so only the
 * processor's capture log shows the double charge.
 */
final class BrokenProcessor {
    private BrokenProcessor() {}

    /** Runs {@code payments} payments (two duplicates each) against the broken processor. */
    static ChaosRun.Result run(int payments) {
        PspConfig broken = PspConfig.custom()
                .honourIdempotencyKeys(false)
                .faults(FaultSettings.custom()
                        .latency(Duration.ofMillis(2500), Duration.ZERO)
                        .build())
                .build();
        Topology.Settings oneInstance = new Topology.Settings(
                        1, Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofSeconds(6), 6)
                .withoutKeepAlive();
        try (Topology topology = Topology.start(
                "broken",
                oneInstance,
                dir -> ChaosDatabase.sharedSchema("chaos_broken"),
                dir -> Processor.startInProcess(broken),
                LoadGenerator.Settings.defaults().withDuplicates(2).withPacing(Duration.ofMillis(100)))) {
            return new ChaosRun(topology, "broken")
                    .run(
                            "broken processor",
                            payments,
                            () -> Faults.none("processor calls slower than the lease, keys ignored"),
                            1);
        }
    }
}
