package dev.exactly.payments;

import dev.exactly.payments.charge.ChargeObserver;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.refund.RefundObserver;
import dev.exactly.payments.refund.RefundRow;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Crash injection for tests: the service's {@link ChargeObserver} and {@link RefundObserver}, armed to make
 * the next charge of a chosen customer (or the next refund of a chosen charge) die at a chosen step, once, by throwing an {@link Error} where a crashed process would
 * have stopped (the request then ends in a 500; what was committed stays, the rest rolls back). Installed
 * with {@code @Import(Crashes.Installed.class)}; the service itself never has one.
 */
public final class Crashes implements ChargeObserver, RefundObserver {

    /** The steps after which a crash leaves a charge to recovery. */
    public enum Point {
        /** After phase 1 committed, before the processor is called. */
        AFTER_CHARGE_CREATED,
        /** After the processor answered, before phase 3 starts. */
        AFTER_PROCESSOR_CALL,
        /** Inside phase 3, before its writes and commit are sent (so none of it commits). */
        BEFORE_FINISH;

        /** The name in keys and customer ids, e.g. {@code after-charge-created}. */
        public String wire() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Map<String, Point> armed = new ConcurrentHashMap<>();
    private final Map<String, Point> armedRefunds = new ConcurrentHashMap<>();
    private final Map<String, Consumer<ChargeRow>> afterProcessor = new ConcurrentHashMap<>();

    /** The next charge of {@code customer} dies at {@code point} (once). */
    public void arm(String customer, Point point) {
        armed.put(customer, point);
    }

    /**
     * The next refund of {@code chargeId} dies at {@code point} (once): {@link Point#AFTER_CHARGE_CREATED}
     * stands for "after the refund's phase 1 committed".
     */
    public void armRefund(String chargeId, Point point) {
        armedRefunds.put(chargeId, point);
    }

    @Override
    public void created(RefundRow refund) {
        reached(refund, Point.AFTER_CHARGE_CREATED);
    }

    @Override
    public void processorAnswered(RefundRow refund) {
        reached(refund, Point.AFTER_PROCESSOR_CALL);
    }

    @Override
    public void beforeCommit(RefundRow refund) {
        reached(refund, Point.BEFORE_FINISH);
    }

    private void reached(RefundRow refund, Point point) {
        if (armedRefunds.remove(refund.chargeId(), point)) {
            throw new InjectedCrash(point, refund.id());
        }
    }

    @Override
    public void created(ChargeRow charge) {
        reached(charge, Point.AFTER_CHARGE_CREATED);
    }

    /**
     * The next charge of {@code customer} runs {@code action} once the processor answered, before phase 3
     * (once), and goes on: e.g. another owner takes its durable record meanwhile.
     */
    public void afterProcessorAnswer(String customer, Consumer<ChargeRow> action) {
        afterProcessor.put(customer, action);
    }

    @Override
    public void processorAnswered(ChargeRow charge) {
        Consumer<ChargeRow> action = afterProcessor.remove(charge.customer());
        if (action != null) {
            action.accept(charge);
        }
        reached(charge, Point.AFTER_PROCESSOR_CALL);
    }

    @Override
    public void beforeCommit(ChargeRow charge) {
        reached(charge, Point.BEFORE_FINISH);
    }

    private void reached(ChargeRow charge, Point point) {
        if (armed.remove(charge.customer(), point)) {
            throw new InjectedCrash(point, charge.id());
        }
    }

    /** The injected death of a request: an {@link Error}, so nothing on its way handles it as a failure. */
    public static final class InjectedCrash extends Error {
        InjectedCrash(Point point, String id) {
            super("injected crash of " + id + " " + point.wire(), null, false, false);
        }
    }

    /** Installs the observer in a test's service. */
    @TestConfiguration(proxyBeanMethods = false)
    public static class Installed {
        @Bean
        Crashes crashes() {
            return new Crashes();
        }
    }
}
