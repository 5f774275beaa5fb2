package dev.exactly.payments.charge;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One row of {@code payments_charge_action}: a capture or a void of an authorized charge, with its own
 * idempotency key (scope unique, kept forever) and the processor key derived from the charge and the
 * operation.
 *
 * @param id            the action id ({@code ca_…})
 * @param tenant        the owning tenant
 * @param scopeKey      the scope of the request (or of the expiry worker's void)
 * @param fingerprint   the request's fingerprint
 * @param chargeId      the authorized charge
 * @param kind          capture or void
 * @param origin        a client's request, or the expiry of the authorization
 * @param amount        the amount to capture; {@code null}: the whole authorization (always for a void)
 * @param status        pending, succeeded or refused
 * @param downstreamKey the processor's Idempotency-Key
 * @param answer        the recorded answer once finished
 */
public record ChargeAction(
        String id,
        String tenant,
        ScopeKey scopeKey,
        Fingerprint fingerprint,
        String chargeId,
        Kind kind,
        Origin origin,
        @Nullable Long amount,
        Status status,
        String downstreamKey,
        @Nullable StoredResponse answer) {

    /** What the action does to the authorization. */
    public enum Kind {
        /** Captures it, in full or in part (the rest is released). */
        CAPTURE,
        /** Releases it. */
        VOID;

        public String db() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The verb, as problem documents use it. */
        public String verb() {
            return db();
        }

        static Kind fromDb(String value) {
            return valueOf(value.toUpperCase(Locale.ROOT));
        }
    }

    /** Who asked for the action. */
    public enum Origin {
        /** A client's {@code POST /v1/charges/{id}/capture} or {@code /void}. */
        API,
        /** The expiry of the authorization (a void). */
        EXPIRY;

        public String db() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Origin fromDb(String value) {
            return valueOf(value.toUpperCase(Locale.ROOT));
        }
    }

    /** The life of an action row. */
    public enum Status {
        /** Started: the processor may or may not have been asked. */
        PENDING,
        /** Done at the processor and in the ledger; the charge resolved. */
        SUCCEEDED,
        /** Refused (by the charge's state or by the processor); nothing changed. */
        REFUSED;

        public String db() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Status fromDb(String value) {
            return valueOf(value.toUpperCase(Locale.ROOT));
        }
    }

    /** The action's checkpoint once its row is committed: the processor may have been called from here on. */
    static final Checkpoint CREATED = Checkpoint.of("action_created");

    static final String COLUMNS = """
            a.id, a.tenant, a.scope_key, a.fingerprint, a.charge_id, a.kind, a.origin, a.amount, a.status,
            a.downstream_key, a.response_status, a.response_type, a.response_location, a.response_body\n""";

    /** The processor's Idempotency-Key of an operation on a charge: one capture and one void per charge. */
    public static String downstreamKeyOf(String chargeId, Kind kind) {
        return "exactly_" + kind.db() + "_" + chargeId;
    }

    static ChargeAction map(ResultSet rs) throws SQLException {
        return new ChargeAction(
                rs.getString("id"),
                rs.getString("tenant"),
                new ScopeKey(rs.getString("scope_key")),
                Fingerprint.decode(rs.getString("fingerprint")),
                rs.getString("charge_id"),
                Kind.fromDb(rs.getString("kind")),
                Origin.fromDb(rs.getString("origin")),
                Jdbc.nullableLong(rs, "amount"),
                Status.fromDb(rs.getString("status")),
                Objects.requireNonNull(rs.getString("downstream_key")),
                AnswerColumns.read(rs));
    }
}
