package dev.exactly.payments.webhooks;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** The types of the events the service records, with their names on the wire. */
public enum EventType {
    CHARGE_SUCCEEDED("charge.succeeded"),
    CHARGE_FAILED("charge.failed"),
    CHARGE_CAPTURED("charge.captured"),
    CHARGE_VOIDED("charge.voided"),
    REFUND_SUCCEEDED("refund.succeeded");

    /** The filter value that subscribes an endpoint to every type. */
    public static final String ALL = "*";

    private final String wireName;

    EventType(String wireName) {
        this.wireName = wireName;
    }

    /** The name on the wire, e.g. {@code charge.succeeded}. */
    public String wireName() {
        return wireName;
    }

    /** The type of a wire name. */
    public static Optional<EventType> of(String wireName) {
        return Arrays.stream(values()).filter(t -> t.wireName.equals(wireName)).findFirst();
    }

    /** Every wire name, in declaration order. */
    public static List<String> wireNames() {
        return Arrays.stream(values()).map(EventType::wireName).toList();
    }
}
