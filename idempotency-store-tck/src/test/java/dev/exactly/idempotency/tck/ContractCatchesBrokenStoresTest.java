package dev.exactly.idempotency.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * A contract that passes everything proves nothing: the race test must catch a non-atomic claim, and the
 * keep-alive test a renewal that does not extend the lease.
 */
class ContractCatchesBrokenStoresTest {

    @Test
    void raceTestFailsOnAFindThenCreateStore() {
        EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(NonAtomicStoreContract.class, "race"))
                .execute()
                .testEvents()
                .assertStatistics(stats -> stats.started(1).failed(1));
    }

    @Test
    void keepAliveTestFailsOnAStoreThatDoesNotExtendLeases() {
        EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(IgnoredRenewalStoreContract.class, "keepAliveHoldsTheKeyThroughALongAction"))
                .execute()
                .testEvents()
                .assertStatistics(stats -> stats.started(1).failed(1));
    }
}
