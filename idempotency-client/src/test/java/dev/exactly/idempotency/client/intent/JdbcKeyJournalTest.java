package dev.exactly.idempotency.client.intent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.testing.TestPostgres;
import java.sql.Connection;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The JDBC journal on real PostgreSQL, in a fresh schema per test. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcKeyJournalTest extends KeyJournalContract {
    private DataSource last;

    @BeforeAll
    void server() {
        TestPostgres.jdbcUrl();
    }

    @Override
    KeyJournal journal() {
        last = TestPostgres.freshSchema("client_journal");
        JdbcKeyJournal.createTable(last);
        return JdbcKeyJournal.create(last);
    }

    @Test
    void theShippedSchemaIsIdempotentAndSurvivesANewInstance() throws Exception {
        KeyJournal journal = journal();
        JournalEntry e = journal.putIfAbsent(entry("order-1", "key-1", T0));

        JdbcKeyJournal.createTable(last);
        KeyJournal again = JdbcKeyJournal.create(last);

        assertThat(again.find(e.intent())).contains(e);
        try (Connection c = last.getConnection();
                Statement s = c.createStatement()) {
            var rows = s.executeQuery("SELECT headers, body FROM idempotency_client_journal");
            rows.next();
            assertThat(rows.getString("headers"))
                    .doesNotContainIgnoringCase("authorization")
                    .doesNotContain("sk_secret");
        }
    }

    @Test
    void aDamagedRowIsReportedNotReplacedByANewKey() throws Exception {
        KeyJournal journal = journal();
        JournalEntry e = journal.putIfAbsent(entry("order-1", "key-1", T0));
        try (Connection c = last.getConnection();
                Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE idempotency_client_journal SET targets = 'not a uri'");
        }

        assertThatThrownBy(() -> journal.putIfAbsent(entry("order-1", "key-2", T0)))
                .isInstanceOf(KeyJournalException.class)
                .hasMessageContaining("no new key");
        assertThatThrownBy(() -> journal.find(e.intent())).isInstanceOf(KeyJournalException.class);
    }

    @Test
    void aJournalWithoutItsTableFailsLoudly() {
        KeyJournal journal = JdbcKeyJournal.create(TestPostgres.freshSchema("client_journal_missing"));

        assertThatThrownBy(() -> journal.putIfAbsent(entry("order-1", "key-1", T0)))
                .isInstanceOf(KeyJournalException.class)
                .hasMessageContaining("idempotency_client_journal");
    }
}
