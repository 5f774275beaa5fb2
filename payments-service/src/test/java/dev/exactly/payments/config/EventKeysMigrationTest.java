package dev.exactly.payments.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.webhooks.Event;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Events;
import dev.exactly.payments.webhooks.Outbox;
import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * Upgrading a database of payments migration V8 with events and deliveries: V9 keys events by (tenant, seq)
 * and drops the indexes no reader uses; every event stays listed in its order per tenant, found by its id, and
 * its deliveries keep their key; new events join the list after the old ones.
 */
class EventKeysMigrationTest {
    private static final InstantSource CLOCK = InstantSource.fixed(Instant.parse("2026-12-02T03:00:00Z"));

    @Test
    void existingEventsKeepTheirOrderAndIdsUnderTheNewKey() throws Exception {
        DataSource dataSource = TestPostgres.freshSchema("pay_events_upgrade");
        MigrationSupport.flyway(dataSource, "classpath:db/ledger", "flyway_history_ledger", null);
        MigrationSupport.flyway(dataSource, "classpath:db/idempotency", "flyway_history_idempotency", null);
        Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:db/payments")
                .table("flyway_history_payments")
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .target("8")
                .load()
                .migrate();

        Outbox outbox = new Outbox(CLOCK);
        Jdbc jdbc = new Jdbc(dataSource);
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute("""
                    INSERT INTO payments_webhook_endpoint (id, tenant, url, enabled_events, secret, status, created_at)
                    VALUES ('we_1', 'acme', 'https://example.com/hook', '{*}', 'whsec_1', 'enabled', now())""");
            for (int i = 0; i < 3; i++) {
                outbox.record(c, "acme", EventType.CHARGE_SUCCEEDED, "ch_a" + i, "{\"n\":" + i + "}");
                outbox.record(c, "globex", EventType.CHARGE_FAILED, "ch_g" + i, "{\"n\":" + i + "}");
            }
        }
        List<String> acmeBefore = ids(new Events(jdbc, CLOCK), "acme");
        List<String> globexBefore = ids(new Events(jdbc, CLOCK), "globex");
        assertThat(acmeBefore).hasSize(3);

        DatabaseConfiguration.migrate(dataSource);

        assertThat(indexes(jdbc))
                .containsExactlyInAnyOrder(
                        "payments_event_id: CREATE UNIQUE INDEX payments_event_id ON %s.payments_event USING btree (id)",
                        "payments_event_pkey: CREATE UNIQUE INDEX payments_event_pkey ON %s.payments_event USING btree (tenant, seq)");
        Events events = new Events(jdbc, CLOCK);
        assertThat(ids(events, "acme")).isEqualTo(acmeBefore);
        assertThat(ids(events, "globex")).isEqualTo(globexBefore);
        // keyset pages across the upgrade, and one event by its id with its delivery
        Events.EventPage first = events.page("acme", null, 2, null).orElseThrow();
        assertThat(first.events()).extracting(Event::id).containsExactlyElementsOf(acmeBefore.subList(0, 2));
        assertThat(events.page("acme", first.nextAfter(), 2, null).orElseThrow().events())
                .extracting(Event::id)
                .containsExactly(acmeBefore.get(2));
        Events.EventDetail detail = events.find("acme", acmeBefore.get(1)).orElseThrow();
        assertThat(detail.event().subjectId()).isEqualTo("ch_a1");
        assertThat(detail.deliveries()).hasSize(1);
        assertThat(events.find("globex", acmeBefore.get(1))).isEmpty();

        String added;
        try (Connection c = dataSource.getConnection()) {
            added = outbox.record(c, "acme", EventType.CHARGE_SUCCEEDED, "ch_a3", "{\"n\":3}");
        }
        assertThat(ids(events, "acme")).hasSize(4).endsWith(added).startsWith(acmeBefore.toArray(String[]::new));
    }

    private static List<String> ids(Events events, String tenant) {
        return events.page(tenant, null, 100, null).orElseThrow().events().stream()
                .map(Event::id)
                .toList();
    }

    private static List<String> indexes(Jdbc jdbc) {
        return jdbc.query("""
                SELECT indexname || ': ' || replace(indexdef, schemaname, '%s') FROM pg_indexes
                WHERE schemaname = current_schema() AND tablename = 'payments_event'""", s -> {}, rs -> rs.getString(1));
    }
}
